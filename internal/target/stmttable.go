package target

import "strings"

// StatementTable is the table a statement works on, as its text names it:
// UPDATE t, DELETE FROM t, INSERT INTO t / REPLACE INTO t, else the first
// FROM t of a SELECT (a routine called in FROM gives "f()"). Quotes are
// kept as written; "" when the text names none (CALL, SET …).
//
// A session that waits for a lock waits for rows of the table its
// statement changes or locks, so the statement's table names the hot
// table where the server does not (PostgreSQL's waits on a transaction
// id). Only ceiling's own statements are read this way.
func StatementTable(sql string) string {
	words := strings.Fields(sql)
	at := func(i int) string {
		if i >= 0 && i < len(words) {
			return words[i]
		}
		return ""
	}
	next := -1
	for i := 0; i < len(words) && next < 0; i++ {
		switch strings.ToUpper(words[i]) {
		case "UPDATE":
			next = i + 1
			if strings.EqualFold(at(next), "ONLY") {
				next++
			}
		case "INTO", "FROM":
			next = i + 1
			if strings.EqualFold(at(next), "ONLY") {
				next++
			}
		case "CALL", "SET", "BEGIN", "COMMIT", "ROLLBACK", "START":
			if i == 0 {
				return ""
			}
		}
	}
	name := at(next)
	if name == "" || strings.HasPrefix(name, "(") {
		return "" // a subquery
	}
	if i := strings.IndexByte(name, '('); i > 0 {
		return name[:i] + "()"
	}
	return strings.TrimRight(name, ",;")
}
