// Package filter matches parsed log entries against key=value conditions.
package filter

import (
	"fmt"

	"example.com/logq/internal/logfmt"
)

// Condition is one key=value (or key!=value) term.
type Condition struct {
	Key, Value string
	Negate     bool
}

// Query holds conditions that must all hold.
type Query []Condition

// ParseQuery reads terms such as `level=error` and `service!=cron`.
func ParseQuery(args []string) (Query, error) {
	var q Query
	for _, arg := range args {
		var c Condition
		if i := indexOf(arg, "!="); i > 0 {
			c = Condition{Key: arg[:i], Value: arg[i+2:], Negate: true}
		} else if i := indexOf(arg, "="); i > 0 {
			c = Condition{Key: arg[:i], Value: arg[i+1:]}
		} else {
			return nil, fmt.Errorf("term %q is not key=value or key!=value", arg)
		}
		q = append(q, c)
	}
	return q, nil
}

func indexOf(s, sub string) int {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return i
		}
	}
	return -1
}

// Match reports whether every condition holds for entry.
func (q Query) Match(entry logfmt.Entry) bool {
	for _, c := range q {
		if (entry[c.Key] == c.Value) == c.Negate {
			return false
		}
	}
	return true
}
