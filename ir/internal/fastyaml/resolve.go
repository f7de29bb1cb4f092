package fastyaml

import (
	"strconv"
	"strings"
	"time"
)

// resolvePlain returns the tag yaml.v3 gives an untagged plain scalar. It mirrors resolve("", v)
// in yaml.v3's resolve.go step by step, with the same strconv and time calls, so that its
// quirks carry over: YAML 1.1 octals (0777), binary and 0o literals, underscores in numbers,
// integers beyond 64 bits that become floats, and date-like strings that become timestamps,
// while yes/no/on/off stay strings.
func resolvePlain(v string) string {
	if v == "" {
		return nullTag
	}
	switch c := v[0]; {
	case c == '+' || c == '-' || c == '.' || (c >= '0' && c <= '9'):
	case strings.IndexByte("yYnNtTfFoO~", c) >= 0:
	default:
		return strTag
	}
	switch v {
	case "true", "True", "TRUE", "false", "False", "FALSE":
		return boolTag
	case "~", "null", "Null", "NULL":
		return nullTag
	case ".nan", ".NaN", ".NAN",
		".inf", ".Inf", ".INF",
		"+.inf", "+.Inf", "+.INF",
		"-.inf", "-.Inf", "-.INF":
		return floatTag
	}
	switch v[0] {
	case '.':
		if _, err := strconv.ParseFloat(v, 64); err == nil {
			return floatTag
		}
	case '+', '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		return resolveNumber(v)
	}
	return strTag
}

// resolveNumber resolves a plain scalar starting with a sign or a digit.
func resolveNumber(v string) string {
	if isTimestamp(v) {
		return timestampTag
	}
	plain := strings.ReplaceAll(v, "_", "")
	if _, err := strconv.ParseInt(plain, 0, 64); err == nil {
		return intTag
	}
	if _, err := strconv.ParseUint(plain, 0, 64); err == nil {
		return intTag
	}
	if isYAMLFloat(plain) {
		if _, err := strconv.ParseFloat(plain, 64); err == nil {
			return floatTag
		}
	}
	if strings.HasPrefix(plain, "0b") {
		if parsesInt(plain[2:], 2) {
			return intTag
		}
	} else if strings.HasPrefix(plain, "-0b") {
		if _, err := strconv.ParseInt("-"+plain[3:], 2, 64); err == nil {
			return intTag
		}
	}
	if strings.HasPrefix(plain, "0o") {
		if parsesInt(plain[2:], 8) {
			return intTag
		}
	} else if strings.HasPrefix(plain, "-0o") {
		if _, err := strconv.ParseInt("-"+plain[3:], 8, 64); err == nil {
			return intTag
		}
	}
	return strTag
}

// parsesInt reports whether s is a signed or unsigned 64-bit integer in base.
func parsesInt(s string, base int) bool {
	if _, err := strconv.ParseInt(s, base, 64); err == nil {
		return true
	}
	_, err := strconv.ParseUint(s, base, 64)
	return err == nil
}

// isYAMLFloat matches yaml.v3's yamlStyleFloat,
// ^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$, without a regexp engine.
func isYAMLFloat(s string) bool {
	i := 0
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	if i < len(s) && s[i] == '.' {
		if i = skipDigits(s, i+1); s[i-1] == '.' {
			return false
		}
	} else {
		j := skipDigits(s, i)
		if j == i {
			return false
		}
		i = j
		if i < len(s) && s[i] == '.' {
			i = skipDigits(s, i+1)
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		j := skipDigits(s, i)
		if j == i {
			return false
		}
		i = j
	}
	return i == len(s)
}

func skipDigits(s string, i int) int {
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return i
}

// timestampFormats are the layouts yaml.v3 tries, in its order.
var timestampFormats = []string{
	"2006-1-2T15:4:5.999999999Z07:00",
	"2006-1-2t15:4:5.999999999Z07:00",
	"2006-1-2 15:4:5.999999999",
	"2006-1-2",
}

// isTimestamp mirrors yaml.v3's parseTimestamp.
func isTimestamp(s string) bool {
	i := skipDigits(s, 0)
	if i != 4 || i == len(s) || s[i] != '-' {
		return false
	}
	for _, format := range timestampFormats {
		if _, err := time.Parse(format, s); err == nil {
			return true
		}
	}
	return false
}
