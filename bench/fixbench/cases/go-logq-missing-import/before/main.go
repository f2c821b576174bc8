// Command logq prints the logfmt lines on stdin that match a query.
//
//	logq level=error service=api < app.log
package main

import (
	"bufio"
	"fmt"
	"os"

	"example.com/logq/internal/filter"
	"example.com/logq/internal/logfmt"
)

func main() {
	query, err := filter.ParseQuery(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "logq:", err)
		os.Exit(2)
	}
	scanner := bufio.NewScanner(os.Stdin)
	scanner.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	for scanner.Scan() {
		entry, err := logfmt.Parse(scanner.Text())
		if err != nil {
			continue // not every line of a log is logfmt
		}
		if query.Match(entry) {
			fmt.Println(scanner.Text())
		}
	}
	if err := scanner.Err(); err != nil {
		fmt.Fprintln(os.Stderr, "logq:", err)
		os.Exit(1)
	}
}
