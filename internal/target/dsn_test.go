package target

import (
	"strings"
	"testing"
)

func TestRedact(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"empty", "", ""},
		{"sqlite", "sqlite:ceiling.db", "sqlite:ceiling.db"},
		{"sqlite params", "sqlite:file.db?_pragma=busy_timeout(5000)", "sqlite:file.db?_pragma=busy_timeout(5000)"},
		{"pg url", "postgres://u:pw@h/db", "postgres://u:xxxxx@h/db"},
		{"postgresql url", "postgresql://u:secret@h:5432/db?sslmode=disable", "postgresql://u:xxxxx@h:5432/db?sslmode=disable"},
		{"pg url no password", "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable", "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"},
		{"pg url empty password", "postgres://u:@h/db", "postgres://u:@h/db"},
		{"pg url no user", "postgres://h/db", "postgres://h/db"},
		{"pg url only password", "postgres://:pw@h/db", "postgres://:xxxxx@h/db"},
		{"pg url escaped", "postgres://u:p%40ss%2Fw@h/db", "postgres://u:xxxxx@h/db"},
		{"pg url raw at", "postgres://u:p@ss@h/db", "postgres://u:xxxxx@h/db"},
		{"pg url raw slash", "postgres://u:p/ss@h/db", "postgres://u:xxxxx@h/db"},
		{"pg url raw question", "postgres://u:p?ss@h/db?application_name=a@b", "postgres://u:xxxxx@h/db?application_name=a@b"},
		{"pg url at in query", "postgres://h:5432/db?user=admin@srv&sslmode=require", "postgres://h:5432/db?user=admin@srv&sslmode=require"},
		{"pg url password param", "postgres://h/db?user=u&password=secret&sslmode=disable", "postgres://h/db?user=u&password=xxxxx&sslmode=disable"},
		{"pg url sslpassword param", "postgres://h/db?sslpassword=k3y", "postgres://h/db?sslpassword=xxxxx"},
		{"pg url multi host", "postgres://u:pw@h1:5432,h2:5433/db", "postgres://u:xxxxx@h1:5432,h2:5433/db"},
		{"pg url fragment", "postgres://u:pw@h/db?a=b#frag", "postgres://u:xxxxx@h/db?a=b#frag"},
		{"mysql url", "mysql://u:pw@h:3306/db", "mysql://u:xxxxx@h:3306/db"},
		{"mysql url params", "mysql://root:toor@127.0.0.1:3306/test?parseTime=true", "mysql://root:xxxxx@127.0.0.1:3306/test?parseTime=true"},
		{"sqlserver url", "sqlserver://sa:Str0ng!@h:1433?database=x", "sqlserver://sa:xxxxx@h:1433?database=x"},
		{"kv", "host=h user=u password=secret dbname=d", "host=h user=u password=xxxxx dbname=d"},
		{"kv quoted", `host=h password='se cr\'et' dbname=d`, "host=h password=xxxxx dbname=d"},
		{"kv spaces", "host = h password = secret dbname = d", "host = h password = xxxxx dbname = d"},
		{"kv upper", "Password=secret host=h", "Password=xxxxx host=h"},
		{"kv last", "host=h password=secret", "host=h password=xxxxx"},
		{"kv no password", "host=h user=u", "host=h user=u"},
		{"kv empty password", "host=h password= user=u", "host=h password= xxxxx"}, // libpq reads "user=u" as the password,
		{"kv unterminated quote", "host=h password='secret", "host=h password=xxxxx"},
		{"ado", "server=h;user id=u;password=secret;database=d", "server=h;user id=u;password=xxxxx"},
		{"ado pwd", "server=h;uid=u;pwd=secret", "server=h;uid=u;pwd=xxxxx"},
		{"driver", "u:pw@tcp(h:3306)/db?parseTime=true", "u:xxxxx@tcp(h:3306)/db?parseTime=true"},
		{"driver at in password", "u:p@w@tcp(h:3306)/db", "u:xxxxx@tcp(h:3306)/db"},
		{"driver no password", "u@tcp(h:3306)/db", "u@tcp(h:3306)/db"},
		{"garbage", "::::@@@///???===", ":xxxxx@///???==="},
		{"garbage scheme only", "postgres://", "postgres://"},
		{"garbage at only", "postgres://@", "postgres://@"},
		{"garbage colon at", "postgres://:@", "postgres://:@"},
		{"garbage equals", "=", "="},
		{"garbage quote", "password='", "password=xxxxx"},
		{"garbage backslash", `password=\`, "password=xxxxx"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Redact(tt.in); got != tt.want {
				t.Errorf("Redact(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

// TestRedactHidesPassword checks the property that matters on a wider set
// of shapes: the password text never survives.
func TestRedactHidesPassword(t *testing.T) {
	const pw = "Sup3rS3cret"
	shapes := []string{
		"postgres://u:%s@h/db",
		"postgresql://u:%s@h:5432,h2/db?sslmode=disable",
		"mysql://u:%s@h:3306/db?x=y",
		"postgres://h/db?password=%s",
		"host=h password=%s",
		"host=h password='%s'",
		"password=%s;server=h",
		"u:%s@tcp(h)/db",
		"u:%s@unix(/tmp/s.sock)/db",
		"postgres://u:%s/x@h/db",
		"postgres://u:%s?x@h/db",
	}
	for _, shape := range shapes {
		dsn := strings.ReplaceAll(shape, "%s", pw)
		if got := Redact(dsn); strings.Contains(got, pw) {
			t.Errorf("Redact(%q) = %q: password survived", dsn, got)
		}
	}
}

func TestScrub(t *testing.T) {
	tests := []struct {
		name, msg, dsn string
		secrets        []string
		want           string
	}{
		{"url", "auth failed for u with Sup3rS3cret", "postgres://u:Sup3rS3cret@h/db", nil, "auth failed for u with xxxxx"},
		{"escaped in dsn", "bad password p@ssword!", "postgres://u:p%40ssword%21@h/db", nil, "bad password xxxxx"},
		{"kv quoted", "x se cret y", `password='se cret' host=h`, nil, "x xxxxx y"},
		{"extra secret", "from env: envS3cret", "postgres://u@h/db", []string{"envS3cret"}, "from env: xxxxx"},
		{"short left alone", "a pw b", "postgres://u:pw@h/db", nil, "a pw b"},
		{"nothing", "plain message", "sqlite:x.db", nil, "plain message"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Scrub(tt.msg, tt.dsn, tt.secrets...); got != tt.want {
				t.Errorf("Scrub(%q, %q) = %q, want %q", tt.msg, tt.dsn, got, tt.want)
			}
		})
	}
}

func FuzzRedact(f *testing.F) {
	for _, s := range []string{"postgres://u:pw@h/db", "host=h password='x", "u:p@tcp(h)/d?x=1", "a://@:?=&#"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		_ = Redact(s)
		_ = Scrub(s, s)
	})
}
