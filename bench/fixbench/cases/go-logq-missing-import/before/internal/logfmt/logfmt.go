// Package logfmt reads key=value log lines; values may be double-quoted.
package logfmt

import (
	"errors"
	"strings"
)

// Entry is one parsed line.
type Entry map[string]string

var errNoPairs = errors.New("logfmt: no key=value pairs")

// Parse reads `ts=... level=info msg="hello world"`.
func Parse(line string) (Entry, error) {
	entry := Entry{}
	rest := strings.TrimSpace(line)
	for rest != "" {
		eq := strings.IndexByte(rest, '=')
		if eq <= 0 || strings.ContainsAny(rest[:eq], " \t") {
			return nil, errNoPairs
		}
		key := rest[:eq]
		rest = rest[eq+1:]
		var value string
		if strings.HasPrefix(rest, `"`) {
			end := strings.IndexByte(rest[1:], '"')
			if end < 0 {
				return nil, errors.New("logfmt: unterminated quote")
			}
			value, rest = rest[1:end+1], rest[end+2:]
		} else if sp := strings.IndexAny(rest, " \t"); sp >= 0 {
			value, rest = rest[:sp], rest[sp:]
		} else {
			value, rest = rest, ""
		}
		entry[key] = value
		rest = strings.TrimLeft(rest, " \t")
	}
	if len(entry) == 0 {
		return nil, errNoPairs
	}
	return entry, nil
}
