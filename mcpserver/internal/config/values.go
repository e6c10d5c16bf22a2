package config

import (
	"log/slog"
	"strconv"
	"strings"
	"time"
)

// shown quotes a non-secret value for an error message, shortened so a
// pasted blob does not flood the log.
func shown(v string) string {
	const limit = 64
	if len(v) > limit {
		v = v[:limit] + "..."
	}
	return strconv.Quote(v)
}

func (l *loader) intIn(name string, def, lo, hi int) int {
	v := l.getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < lo || n > hi {
		l.fail("%s=%s: must be an integer from %d to %d", name, shown(v), lo, hi)
		return def
	}
	return n
}

func (l *loader) durationIn(name string, def, lo, hi time.Duration) time.Duration {
	v := l.getenv(name)
	if v == "" {
		return def
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < lo || d > hi {
		l.fail("%s=%s: must be a duration from %s to %s, like %s", name, shown(v), lo, hi, def)
		return def
	}
	return d
}

// boolean accepts true/false/1/0 only: "yes", "on" or "TRUE" are refused
// rather than guessed, because a write switch must not be read wrongly.
func (l *loader) boolean(name string) bool {
	switch v := l.getenv(name); v {
	case "", "false", "0":
		return false
	case "true", "1":
		return true
	default:
		l.fail("%s=%s: must be true, false, 1 or 0", name, shown(v))
		return false
	}
}

func (l *loader) enum(name, def string, allowed ...string) string {
	v := l.getenv(name)
	if v == "" {
		return def
	}
	for _, a := range allowed {
		if v == a {
			return v
		}
	}
	l.fail("%s=%s: must be one of %s", name, shown(v), strings.Join(allowed, ", "))
	return def
}

func (l *loader) level(name string) slog.Level {
	switch v := l.enum(name, "info", "debug", "info", "warn", "error"); v {
	case "debug":
		return slog.LevelDebug
	case "warn":
		return slog.LevelWarn
	case "error":
		return slog.LevelError
	}
	return slog.LevelInfo
}

// mockNow reads the pinned clock of the embedded demo. The command decides
// whether it may use it.
func (l *loader) mockNow(name string) time.Time {
	v := l.getenv(name)
	if v == "" {
		return time.Time{}
	}
	t, err := time.Parse(time.RFC3339, v)
	if err != nil {
		l.fail("%s=%q: must be an RFC 3339 time such as 2026-11-27T14:30:00+01:00", name, v)
		return time.Time{}
	}
	return t
}
