package report

import (
	"slices"
	"strings"
)

// dbCommands are the commands that take --db.
var dbCommands = []string{"run", "knee", "prepare", "cleanup", "check"}

// WithDB adds --db db (quoted for the shell) to each ceiling command msg
// suggests in backquotes that takes --db and has none, so that, copied,
// it acts on the same database rather than $CEILING_DB or the default
// SQLite file. db should be redacted: a password reads xxxxx, for the user
// to put back.
func WithDB(msg, db string) string {
	var b strings.Builder
	for {
		i := strings.Index(msg, "`ceiling ")
		if i < 0 {
			break
		}
		j := strings.IndexByte(msg[i+1:], '`')
		if j < 0 {
			break
		}
		cmd := msg[i : i+1+j] // from the opening backquote, without the closing one
		b.WriteString(msg[:i])
		b.WriteString(cmd)
		if f := strings.Fields(cmd[len("`ceiling "):]); len(f) > 0 && slices.Contains(dbCommands, f[0]) && !strings.Contains(cmd, "--db") {
			b.WriteString(" --db " + ShellWord(db))
		}
		b.WriteByte('`')
		msg = msg[i+2+j:]
	}
	b.WriteString(msg)
	return b.String()
}

// ShellWord quotes s for a POSIX shell when it is empty or holds anything
// but letters, digits and -_=.,:/%+@.
func ShellWord(s string) string {
	if s == "" {
		return "''"
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("-_=.,:/%+@", c)) {
			return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
		}
	}
	return s
}
