package timeline

import (
	"fmt"
	"strconv"
	"strings"
)

// maxSeconds keeps seconds x 1e9 inside an int64.
const maxSeconds = 9_000_000_000

// ParseSeconds parses seconds as a trace prints them ("576.223558") into nanoseconds exactly (no float
// rounding). Integers without a dot are taken as seconds; a leading '-'
// gives a time before the clock's zero. At least one digit is needed: "",
// "." and "-" are errors, not zero.
func ParseSeconds(s string) (Time, error) {
	s = strings.TrimSpace(s)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	ip, fp, _ := strings.Cut(s, ".")
	if ip == "" && fp == "" {
		return 0, fmt.Errorf("want seconds like 576.223558, got %q", s)
	}
	if ip == "" {
		ip = "0"
	}
	sec, err := strconv.ParseInt(ip, 10, 64)
	if err != nil || len(fp) > 9 || sec > maxSeconds {
		return 0, fmt.Errorf("want seconds like 576.223558, got %q", s)
	}
	ns := int64(0)
	if fp != "" {
		v, err := strconv.ParseInt(fp, 10, 64)
		if err != nil || v < 0 {
			return 0, fmt.Errorf("want seconds like 576.223558, got %q", s)
		}
		for i := len(fp); i < 9; i++ {
			v *= 10
		}
		ns = v
	}
	t := sec*1e9 + ns
	if neg {
		t = -t
	}
	return Time(t), nil
}
