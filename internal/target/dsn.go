package target

import (
	"net/url"
	"strings"
)

// Mask is what Redact and Scrub put in place of a password.
const Mask = "xxxxx"

// ConnectedAs is what a target's Info.DSN appends to a DSN that leaves
// the user, host or database to the environment or the defaults: the
// session it made.
const ConnectedAs = " (connected as "

// GivenDSN is the DSN as given of an Info.DSN (without ConnectedAs's
// part), for a command line that runs against the same target.
func GivenDSN(infoDSN string) string {
	if i := strings.Index(infoDSN, ConnectedAs); i >= 0 && strings.HasSuffix(infoDSN, ")") {
		return infoDSN[:i]
	}
	return infoDSN
}

// Redact returns dsn with every password in it replaced by Mask, for
// results, reports, logs and error messages. It understands
//
//   - URLs: scheme://user:password@host/db (postgres, postgresql, mysql,
//     sqlserver, …), and password-like query parameters (?password=…);
//   - libpq key/value strings: host=h user=u password='p w' dbname=d;
//   - go-sql-driver strings: user:password@tcp(host:3306)/db.
//
// Any key whose name ends in "password" (sslpassword too) or is "pwd" counts
// as a password. Redact never panics; on input it cannot make sense of it
// errs on the side of hiding more than the password.
func Redact(dsn string) string {
	return redact(dsn, nil)
}

// HasPassword says whether dsn holds a password (or what Redact would
// hide as one).
func HasPassword(dsn string) bool { return Redact(dsn) != dsn }

// Scrub returns msg with every password found in dsn, and every extra secret
// given (for example a password taken from PGPASSWORD), replaced by Mask.
// Drivers' messages are not supposed to contain passwords; Scrub is the
// second line of defence when wrapping them. Secrets shorter than four
// bytes are left alone: hiding every "a" in a message would make it
// unreadable, and such passwords are not recognisable in text anyway.
func Scrub(msg, dsn string, secrets ...string) string {
	var found []string
	redact(dsn, &found)
	found = append(found, secrets...)
	for _, s := range found {
		if len(s) < 4 || s == Mask {
			continue
		}
		msg = strings.ReplaceAll(msg, s, Mask)
		if u, err := url.PathUnescape(s); err == nil && len(u) >= 4 && u != s {
			msg = strings.ReplaceAll(msg, u, Mask)
		}
		if e := url.QueryEscape(s); e != s {
			msg = strings.ReplaceAll(msg, e, Mask)
		}
	}
	return msg
}

// redact does Redact's work; when found is not nil it also collects the
// password texts it hid (as they appear in dsn).
func redact(dsn string, found *[]string) string {
	if i := strings.Index(dsn, "://"); i >= 0 && isScheme(dsn[:i]) {
		return redactURL(dsn, i+3, found)
	}
	eq := strings.IndexByte(dsn, '=')
	at := strings.LastIndexByte(dsn, '@')
	if eq >= 0 && (at < 0 || eq < at) {
		return redactKeyValue(dsn, found)
	}
	if at >= 0 {
		return redactDriver(dsn, found)
	}
	return dsn
}

func isScheme(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
		case i > 0 && (c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.'):
		default:
			return false
		}
	}
	return true
}

// isPasswordKey reports whether a key names a password.
func isPasswordKey(k string) bool {
	k = strings.ToLower(strings.TrimSpace(k))
	return strings.HasSuffix(k, "password") || k == "pwd"
}

// redactURL handles scheme://[user[:password]@]host[/path][?query][#frag];
// rest is the index just after "://".
func redactURL(dsn string, rest int, found *[]string) string {
	s := dsn[rest:]
	// The authority ends at the first '/', '?' or '#'. A password with an
	// unescaped '/', '?' or '#' breaks that rule, so when the authority
	// holds no '@', the last '@' that follows "user:…" with no '=' before it
	// (which would mean a query parameter) is taken to end the userinfo.
	end := strings.IndexAny(s, "/?#")
	if end < 0 {
		end = len(s)
	}
	at := strings.LastIndexByte(s[:end], '@')
	for a := len(s) - 1; at < 0 && a >= 0; a-- {
		if s[a] != '@' {
			continue
		}
		pre := s[:a]
		c := strings.IndexByte(pre, ':')
		if c >= 0 && !strings.ContainsAny(pre[:c], "/?#") && !strings.Contains(pre, "=") {
			at = a
		}
	}
	var b strings.Builder
	b.Grow(len(dsn))
	b.WriteString(dsn[:rest])
	if at >= 0 {
		userinfo := s[:at]
		if c := strings.IndexByte(userinfo, ':'); c >= 0 && c+1 < len(userinfo) {
			collect(found, userinfo[c+1:])
			userinfo = userinfo[:c+1] + Mask
		}
		b.WriteString(userinfo)
		s = s[at:]
	}
	q := strings.IndexByte(s, '?')
	if q < 0 {
		b.WriteString(s)
		return b.String()
	}
	b.WriteString(s[:q+1])
	query, frag := s[q+1:], ""
	if h := strings.IndexByte(query, '#'); h >= 0 {
		query, frag = query[:h], query[h:]
	}
	for i, kv := range strings.Split(query, "&") {
		if i > 0 {
			b.WriteByte('&')
		}
		k, v, ok := strings.Cut(kv, "=")
		key := k
		if u, err := url.QueryUnescape(k); err == nil {
			key = u
		}
		if ok && v != "" && isPasswordKey(key) {
			collect(found, v)
			b.WriteString(k + "=" + Mask)
			continue
		}
		b.WriteString(kv)
	}
	b.WriteString(frag)
	return b.String()
}

// redactKeyValue handles libpq key/value strings (and, loosely, ADO-style
// "k=v;k=v" strings): values are either single-quoted with backslash
// escapes or run to the next white space. A password value that is not
// quoted runs to the next white space even across ';', so nothing of it
// can show.
func redactKeyValue(dsn string, found *[]string) string {
	var b strings.Builder
	b.Grow(len(dsn))
	i := 0
	for i < len(dsn) {
		// Copy separators.
		for i < len(dsn) && (isSpace(dsn[i]) || dsn[i] == ';') {
			b.WriteByte(dsn[i])
			i++
		}
		if i >= len(dsn) {
			break
		}
		// Key: up to '=', white space or ';'.
		ks := i
		for i < len(dsn) && dsn[i] != '=' && !isSpace(dsn[i]) && dsn[i] != ';' {
			i++
		}
		key := dsn[ks:i]
		// Optional white space, then '='.
		j := i
		for j < len(dsn) && isSpace(dsn[j]) {
			j++
		}
		if j >= len(dsn) || dsn[j] != '=' {
			b.WriteString(dsn[ks:i])
			continue
		}
		j++
		for j < len(dsn) && isSpace(dsn[j]) {
			j++
		}
		b.WriteString(dsn[ks:j])
		// Value.
		vs := j
		pw := isPasswordKey(key)
		if j < len(dsn) && dsn[j] == '\'' {
			j++
			for j < len(dsn) && dsn[j] != '\'' {
				if dsn[j] == '\\' && j+1 < len(dsn) {
					j++
				}
				j++
			}
			if j < len(dsn) {
				j++ // closing quote
			}
		} else {
			for j < len(dsn) && !isSpace(dsn[j]) && (pw || dsn[j] != ';') {
				if dsn[j] == '\\' && j+1 < len(dsn) {
					j++
				}
				j++
			}
		}
		if pw && j > vs {
			v := dsn[vs:j]
			collect(found, v)
			if len(v) >= 2 && v[0] == '\'' && v[len(v)-1] == '\'' {
				collect(found, unquote(v[1:len(v)-1]))
			} else {
				collect(found, unquote(v))
			}
			b.WriteString(Mask)
		} else {
			b.WriteString(dsn[vs:j])
		}
		i = j
	}
	return b.String()
}

// redactDriver handles go-sql-driver strings user:password@net(addr)/db?k=v.
// Like the driver, it takes the last '/' as the start of the database name
// and the last '@' before it as the end of the user info.
func redactDriver(dsn string, found *[]string) string {
	base := dsn
	if q := strings.IndexByte(dsn, '?'); q >= 0 {
		base = dsn[:q]
	}
	slash := strings.LastIndexByte(base, '/')
	if slash < 0 {
		slash = len(base)
	}
	at := strings.LastIndexByte(base[:slash], '@')
	if at < 0 {
		return dsn
	}
	userinfo := dsn[:at]
	c := strings.IndexByte(userinfo, ':')
	if c < 0 || c+1 >= len(userinfo) {
		return dsn
	}
	collect(found, userinfo[c+1:])
	return userinfo[:c+1] + Mask + dsn[at:]
}

// unquote removes libpq backslash escapes.
func unquote(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func collect(found *[]string, s string) {
	if found != nil && s != "" {
		*found = append(*found, s)
	}
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
}
