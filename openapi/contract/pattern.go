package contract

import (
	"math/rand/v2"
	"regexp"
	"regexp/syntax"
	"strings"
)

// Modes of patternString.
const (
	patShortest = iota
	patLongest
	patRandom
)

// unboundedRepeat caps a repeat without an upper bound (*, +, {n,}) when a
// string is built for it: long enough to be more than the minimum, short
// enough to stay a readable case.
const unboundedRepeat = 8

// patternString builds a string the pattern matches: the shortest, the
// longest (unbounded repeats capped) or a random one. ok is false for a
// pattern with constructs the generator does not build (back-references
// are not in Go's syntax; word boundaries and the like are), so the caller
// falls back to length-only cases.
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

// badRunes are tried, in order, as a character a pattern refuses. None of
// them needs escaping in a path or a query, so a case built with one still
// reaches the operation it is meant for.
const badRunes = "-_a0Z.~!"

// violating returns strings just outside a pattern, each with what makes
// it so: a refused character in place of the first, one repeat too many,
// one character too few. The caller keeps those the contract refuses.
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
