package replay

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Durations, ${i} expansion and the integer expressions of scenario specs.

// parseDuration reads "1.5ms", "20us", "3s", "100ns" or a bare number of ns.
func parseDuration(s string) (int64, error) {
	num, mult := s, 1.0
	for _, u := range []struct {
		suf string
		m   float64
	}{{"ns", 1}, {"us", 1e3}, {"µs", 1e3}, {"ms", 1e6}, {"s", 1e9}} {
		if strings.HasSuffix(s, u.suf) {
			num, mult = strings.TrimSuffix(s, u.suf), u.m
			break
		}
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("bad duration %q", s)
	}
	r := v * mult
	if r < 0 || r > 1e18 {
		return 0, fmt.Errorf("duration %q out of range", s)
	}
	return int64(math.Round(r)), nil
}

// expand substitutes {expr} templates with i.
func expand(s string, i int) (string, error) {
	if !strings.Contains(s, "{") {
		return s, nil
	}
	var b strings.Builder
	for {
		a := strings.IndexByte(s, '{')
		if a < 0 {
			b.WriteString(s)
			break
		}
		z := strings.IndexByte(s[a:], '}')
		if z < 0 {
			return "", fmt.Errorf("unclosed { in %q", s)
		}
		b.WriteString(s[:a])
		v, err := evalExpr(s[a+1:a+z], i)
		if err != nil {
			return "", err
		}
		b.WriteString(strconv.Itoa(v))
		s = s[a+z+1:]
	}
	return b.String(), nil
}

// evalExpr evaluates an integer expression over i with + - * / % and
// parentheses.
func evalExpr(src string, i int) (int, error) {
	e := &exprParser{s: strings.ReplaceAll(src, " ", ""), i: i}
	v, err := e.sum()
	if err != nil {
		return 0, err
	}
	if e.pos != len(e.s) {
		return 0, fmt.Errorf("bad expression {%s}", src)
	}
	return v, nil
}

type exprParser struct {
	s   string
	pos int
	i   int
}

func (e *exprParser) sum() (int, error) {
	v, err := e.product()
	for err == nil && e.pos < len(e.s) && (e.s[e.pos] == '+' || e.s[e.pos] == '-') {
		op := e.s[e.pos]
		e.pos++
		var w int
		w, err = e.product()
		if op == '+' {
			v += w
		} else {
			v -= w
		}
	}
	return v, err
}

func (e *exprParser) product() (int, error) {
	v, err := e.atom()
	for err == nil && e.pos < len(e.s) && (e.s[e.pos] == '*' || e.s[e.pos] == '/' || e.s[e.pos] == '%') {
		op := e.s[e.pos]
		e.pos++
		var w int
		w, err = e.atom()
		if err != nil {
			break
		}
		switch op {
		case '*':
			v *= w
		case '/', '%':
			if w == 0 {
				return 0, fmt.Errorf("division by zero in {%s}", e.s)
			}
			if op == '/' {
				v /= w
			} else {
				v %= w
			}
		}
	}
	return v, err
}

func (e *exprParser) atom() (int, error) {
	if e.pos >= len(e.s) {
		return 0, fmt.Errorf("bad expression {%s}", e.s)
	}
	switch c := e.s[e.pos]; {
	case c == '(':
		e.pos++
		v, err := e.sum()
		if err != nil {
			return 0, err
		}
		if e.pos >= len(e.s) || e.s[e.pos] != ')' {
			return 0, fmt.Errorf("missing ) in {%s}", e.s)
		}
		e.pos++
		return v, nil
	case c == 'i':
		e.pos++
		return e.i, nil
	case c >= '0' && c <= '9':
		st := e.pos
		for e.pos < len(e.s) && e.s[e.pos] >= '0' && e.s[e.pos] <= '9' {
			e.pos++
		}
		return strconv.Atoi(e.s[st:e.pos])
	}
	return 0, fmt.Errorf("bad expression {%s}", e.s)
}
