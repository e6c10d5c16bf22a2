package contract

import (
	"context"
	"encoding/json"
	"math"
	"strconv"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
)

// shrink looks for a smaller case with the same class and first failed
// rule, in at most maxShrinkSteps requests; nil when none is smaller.
func (r *runner) shrink(ctx context.Context, g *generator, c *Case, results []Result) (*Case, []Result) {
	if c.Then != nil || c.Varies == "" && len(c.Query) == 0 {
		return nil, nil
	}
	want := signature(results[0].Findings)
	if want == "" {
		return nil, nil
	}
	var best []Result
	var smallest *Case
	cur := c
	for steps := 0; steps < maxShrinkSteps; {
		improved := false
		for _, cand := range g.candidates(cur) {
			if steps >= maxShrinkSteps || r.sent >= r.cfg.MaxRequests || ctx.Err() != nil {
				break
			}
			if valid, ok := r.spec.validCase(ctx, cand); !ok || valid != (c.Expect == expectValid) {
				continue
			}
			cand.ID = c.ID
			cand.Name = strings.ReplaceAll(cand.Name, " (shrunk)", "") + " (shrunk)"
			steps++
			rs := r.runCase(ctx, cand)
			if anyDrift(rs) && signature(rs[0].Findings) == want {
				cur, best, smallest, improved = cand, rs, cand, true
				break
			}
		}
		if !improved {
			break
		}
	}
	return smallest, best
}

// candidates are the smaller cases the shrinker tries, best first: optional
// query parameters dropped, then the varied value halved toward its bound.
func (g *generator) candidates(c *Case) []*Case {
	var out []*Case
	op := g.sp.ops[c.Operation]
	for _, p := range g.params(op) {
		if p.in == openapi3.ParameterInQuery && !p.required && c.Varies != "query."+p.name {
			if _, has := c.Query[p.name]; has {
				d := c.clone()
				delete(d.Query, p.name)
				d.Name += " (without " + p.name + ")"
				out = append(out, d)
			}
		}
	}
	in, name, _ := strings.Cut(c.Varies, ".")
	var p *param
	for _, q := range g.params(op) {
		if q.in == in && q.name == name {
			p = &q
		}
	}
	if p == nil {
		return out
	}
	cur, ok := c.value(in, name)
	if !ok {
		return out
	}
	if n, err := strconv.ParseInt(cur, 10, 64); err == nil && p.schema.Type.Is(openapi3.TypeInteger) {
		bound := n
		switch {
		case p.schema.Min != nil && n < int64(*p.schema.Min):
			bound = int64(*p.schema.Min) - 1
		case p.schema.Max != nil && n > int64(*p.schema.Max):
			bound = int64(*p.schema.Max) + 1
		}
		if mid := n + (bound-n)/2; mid != n {
			out = append(out, c.with(in, name, strconv.FormatInt(mid, 10), true))
		} else if bound != n {
			out = append(out, c.with(in, name, strconv.FormatInt(bound, 10), true))
		}
	} else if p.schema.Type.Is(openapi3.TypeString) && len(cur) > 1 {
		out = append(out, c.with(in, name, cur[:len(cur)/2], false))
	}
	return out
}

// value reads the varied value of a case.
func (c *Case) value(in, name string) (string, bool) {
	switch in {
	case openapi3.ParameterInQuery:
		v, ok := c.Query[name]
		return v, ok
	case "body":
		var b map[string]any
		if c.Body == nil || json.Unmarshal(c.body(), &b) != nil {
			return "", false
		}
		switch v := b[name].(type) {
		case string:
			return v, true
		case float64:
			if v == math.Trunc(v) {
				return strconv.FormatInt(int64(v), 10), true
			}
		}
	case openapi3.ParameterInPath:
		// The shrinker does not rebuild paths from segments it cannot
		// tell apart; path cases are small already.
	}
	return "", false
}

// with returns a copy of the case with the varied value replaced.
func (c *Case) with(in, name, v string, number bool) *Case {
	d := c.clone()
	switch in {
	case openapi3.ParameterInQuery:
		d.Query[name] = v
	case "body":
		var b map[string]any
		_ = json.Unmarshal(c.body(), &b)
		if n, err := strconv.ParseInt(v, 10, 64); err == nil && number {
			b[name] = n
		} else {
			b[name] = v
		}
		d.Body = strp(mustJSON(b))
	}
	d.Name += " (shrunk)"
	return d
}
