package mirror

import (
	"context"
	"errors"
	"testing"
)

type flakyStore struct {
	files    map[string][]byte
	failures int
}

func (f *flakyStore) Get(name string) ([]byte, error) {
	if f.failures > 0 {
		f.failures--
		return nil, errors.New("connection reset")
	}
	data, ok := f.files[name]
	if !ok {
		return nil, errors.New("no such file")
	}
	return data, nil
}

func (f *flakyStore) Put(name string, data []byte) error {
	f.files[name] = data
	return nil
}

func TestCopySurvivesTransientErrors(t *testing.T) {
	src := &flakyStore{files: map[string][]byte{"a.txt": []byte("A"), "b.txt": []byte("B")}, failures: 2}
	dst := &flakyStore{files: map[string][]byte{}}
	if err := Copy(context.Background(), src, dst, []string{"a.txt", "b.txt"}); err != nil {
		t.Fatal(err)
	}
	if string(dst.files["b.txt"]) != "B" {
		t.Errorf("dst = %v", dst.files)
	}
}
