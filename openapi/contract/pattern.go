package contract

import (
	"maps"
	"math/rand/v2"
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"
	"unicode"
)

// Modes of patternString.
const (
	patShortest = iota
	patLongest
	patRandom
)

// unboundedRepeat caps a repeat without an upper bound when building a
// string.
const unboundedRepeat = 8

// patternString builds a string the pattern matches: the shortest, the
// longest or a random one. ok is false for constructs it does not build
// (such as word boundaries).
func patternString(pattern string, mode int, rng *rand.Rand) (string, bool) {
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return "", false
	}
	var b strings.Builder
	if !buildPattern(re, mode, rng, &b) {
		return "", false
	}
	s := b.String()
	if m, err := regexp.MatchString(pattern, s); err != nil || !m {
		return "", false
	}
	return s, true
}

func buildPattern(re *syntax.Regexp, mode int, rng *rand.Rand, b *strings.Builder) bool {
	switch re.Op {
	case syntax.OpBeginText, syntax.OpEndText, syntax.OpBeginLine, syntax.OpEndLine, syntax.OpEmptyMatch:
		return true
	case syntax.OpLiteral:
		b.WriteString(string(re.Rune))
		return true
	case syntax.OpCharClass:
		r, ok := classRune(re.Rune, mode, rng)
		if ok {
			b.WriteRune(r)
		}
		return ok
	case syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		b.WriteByte('a')
		return true
	case syntax.OpCapture:
		return buildPattern(re.Sub[0], mode, rng, b)
	case syntax.OpConcat:
		for _, sub := range re.Sub {
			if !buildPattern(sub, mode, rng, b) {
				return false
			}
		}
		return true
	case syntax.OpAlternate:
		i := 0
		if mode == patRandom {
			i = rng.IntN(len(re.Sub))
		}
		return buildPattern(re.Sub[i], mode, rng, b)
	case syntax.OpStar, syntax.OpPlus, syntax.OpQuest, syntax.OpRepeat:
		lo, hi := re.Min, re.Max
		switch re.Op {
		case syntax.OpStar:
			lo, hi = 0, -1
		case syntax.OpPlus:
			lo, hi = 1, -1
		case syntax.OpQuest:
			lo, hi = 0, 1
		}
		if hi < 0 {
			hi = lo + unboundedRepeat
		}
		n := lo
		switch mode {
		case patLongest:
			n = hi
		case patRandom:
			n = lo + rng.IntN(hi-lo+1)
		}
		for range n {
			if !buildPattern(re.Sub[0], mode, rng, b) {
				return false
			}
		}
		return true
	}
	return false
}

// classRune picks a printable ASCII rune of a character class: the first
// one, or a random one.
func classRune(ranges []rune, mode int, rng *rand.Rand) (rune, bool) {
	var in []rune
	for i := 0; i+1 < len(ranges); i += 2 {
		for r := max(ranges[i], '!'); r <= min(ranges[i+1], '~'); r++ {
			in = append(in, r)
		}
	}
	if len(in) == 0 {
		return 0, false
	}
	if mode == patRandom {
		return in[rng.IntN(len(in))], true
	}
	return in[0], true
}

// badRunes are tried, in order, as a character a pattern refuses; none
// needs escaping in a path or query.
const badRunes = "-_a0Z.~!"

// violating returns strings just outside a pattern, each with what makes
// it so.
func violating(pattern string, rng *rand.Rand) []labelled {
	re, err := regexp.Compile(pattern)
	if err != nil {
		return nil
	}
	var out []labelled
	short, ok1 := patternString(pattern, patShortest, rng)
	long, ok2 := patternString(pattern, patLongest, rng)
	if !ok1 || !ok2 {
		return nil
	}
	for _, c := range badRunes {
		s := string(c) + short[1:]
		if !re.MatchString(s) {
			out = append(out, labelled{s, "a character the pattern refuses"})
			break
		}
	}
	if s := long + long[len(long)-1:]; !re.MatchString(s) {
		out = append(out, labelled{s, "one character longer than the pattern allows"})
	}
	if len(short) > 1 {
		if s := short[:len(short)-1]; !re.MatchString(s) {
			out = append(out, labelled{s, "one character shorter than the pattern allows"})
		}
	}
	return out
}

// labelled is a generated value and what it is, for the case's name.
type labelled struct {
	value any
	label string
}

// --- the character classes of a value's shape ---

// Class tokens of a Shape's Classes, beside ASCII punctuation and space.
var classRanges = []struct{ token, desc string }{
	{"a-z", ""}, {"A-Z", ""}, {"0-9", ""},
	{`\p{L}`, "a letter outside ASCII"},
	{`\p{N}`, "a digit outside ASCII"},
	{`\x{80}-\x{10FFFF}`, "another character outside ASCII"},
	{`\t`, "a tab"}, {`\n`, "a line feed"}, {`\r`, "a carriage return"},
	{`\x{00}-\x{1F}`, "another control character"},
	{`\x{7F}`, "DEL"},
}

// runeClass is the class token of a rune, or "" for ASCII punctuation and
// the space, which stand for themselves.
func runeClass(r rune) string {
	switch {
	case r >= 'a' && r <= 'z':
		return "a-z"
	case r >= 'A' && r <= 'Z':
		return "A-Z"
	case r >= '0' && r <= '9':
		return "0-9"
	case r == '\t':
		return `\t`
	case r == '\n':
		return `\n`
	case r == '\r':
		return `\r`
	case r < 0x20:
		return `\x{00}-\x{1F}`
	case r == 0x7f:
		return `\x{7F}`
	case r < 0x80:
		return ""
	case unicode.IsLetter(r):
		return `\p{L}`
	case unicode.IsDigit(r):
		return `\p{N}`
	}
	return `\x{80}-\x{10FFFF}`
}

// classSet is a set of class tokens and punctuation characters.
type classSet struct {
	tokens map[string]bool
	punct  map[byte]bool
}

func newClassSet() classSet { return classSet{tokens: map[string]bool{}, punct: map[byte]bool{}} }

func (c classSet) add(r rune) {
	if t := runeClass(r); t != "" {
		c.tokens[t] = true
	} else {
		c.punct[byte(r)] = true
	}
}

// parseClasses reads a class body built by String, with or without
// QuoteMeta escapes. It refuses anything that could spell a value.
func parseClasses(body string) (classSet, bool) {
	c := newClassSet()
	for i := 0; i < len(body); {
		matched := false
		for _, r := range classRanges {
			if strings.HasPrefix(body[i:], r.token) {
				c.tokens[r.token] = true
				i += len(r.token)
				matched = true
				break
			}
		}
		if matched {
			continue
		}
		ch := body[i]
		if ch == '\\' && i+1 < len(body) {
			i++
			ch = body[i]
		}
		i++
		if ch < ' ' || ch >= 0x7f || isAlnum(ch) {
			return classSet{}, false
		}
		c.punct[ch] = true
	}
	return c, len(c.tokens)+len(c.punct) > 0
}

// union adds the other set's members.
func (c classSet) union(o classSet) {
	maps.Copy(c.tokens, o.tokens)
	maps.Copy(c.punct, o.punct)
}

// String writes the set as a class body, in a fixed order: the ranges,
// then the punctuation, escaped where a class needs it, "-" last.
func (c classSet) String() string {
	var b strings.Builder
	for _, r := range classRanges {
		if c.tokens[r.token] {
			b.WriteString(r.token)
		}
	}
	for _, ch := range slices.Sorted(maps.Keys(c.punct)) {
		switch {
		case ch == '-':
			continue
		case strings.IndexByte(`\]^[`, ch) >= 0:
			b.WriteByte('\\')
		}
		b.WriteByte(ch)
	}
	if c.punct['-'] {
		b.WriteByte('-')
	}
	return b.String()
}

// unusual lists, for a person, the classes of a set beyond letters,
// digits and punctuation: "a line feed", "a letter outside ASCII".
func (c classSet) unusual() []string {
	var out []string
	for _, r := range classRanges {
		if c.tokens[r.token] && r.desc != "" {
			out = append(out, r.desc)
		}
	}
	if c.punct['\\'] {
		out = append(out, "a backslash")
	}
	return out
}
