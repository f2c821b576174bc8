package logfmt

import (
	"reflect"
	"testing"
)

func TestParseQuotedValues(t *testing.T) {
	got, err := Parse(`ts=2024-05-01T10:00:00Z level=warn msg="disk almost full" pct=91`)
	if err != nil {
		t.Fatal(err)
	}
	want := Entry{"ts": "2024-05-01T10:00:00Z", "level": "warn", "msg": "disk almost full", "pct": "91"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Parse = %v, want %v", got, want)
	}
}

func TestParseRejectsPlainText(t *testing.T) {
	if _, err := Parse("panic: runtime error"); err == nil {
		t.Error("plain text parsed as logfmt")
	}
}
