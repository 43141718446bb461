// Package field validates the values that reach Wagerail from outside (HTTP bodies and headers,
// gRPC fields, partner callbacks, files), one function per kind of field, so every edge refuses the
// same things in the same words before anything reaches a database, a ledger or a partner.
//
// What every kind refuses, and why:
//   - invalid UTF-8: Postgres refuses it (a 5xx if it gets that far), and a JSON decoder silently
//     turns it into U+FFFD, so the stored value would differ from what was signed or hashed;
//   - U+FFFD itself: the mark of input that was mangled on the way in;
//   - control characters (C0, DEL, C1; NUL above all, which Postgres text cannot hold) and the
//     bidirectional overrides that make a value display as something it is not;
//   - Unicode noncharacters (U+FDD0..U+FDEF and the last two code points of every plane, U+FFFE
//     and U+FFFF above all): XML cannot hold them, so encoding/xml writes them as U+FFFD and a
//     camt.053 statement carrying one is mangled and then refused whole by its reader;
//   - values longer than the kind's bound: every bound is far below what a B-tree index entry
//     holds (about 2.7 kB), so a unique index never refuses a value the edge accepted.
//
// Each edge maps *Error to its own stable code (400 INVALID_REQUEST, gRPC InvalidArgument, …).
package field

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Bounds in bytes. Callers may bound tighter (an account number is at most 64), never looser.
const (
	MaxIdentifier = 128  // tenant ids, account ids, partner names, uuids
	MaxReference  = 255  // idempotency keys, transfer references, event ids
	MaxName       = 256  // a person's or an account holder's name
	MaxText       = 1024 // reasons, descriptions, failure messages
)

// Error says which field was refused and why; its message is safe to return to the caller (it
// never echoes the value).
type Error struct {
	Field   string
	Problem string
}

func (e *Error) Error() string { return e.Field + " " + e.Problem }

func refuse(name, format string, args ...any) *Error {
	return &Error{Field: name, Problem: fmt.Sprintf(format, args...)}
}

// Identifier checks a machine identifier: 1 to max bytes (0 means MaxIdentifier) of ASCII letters,
// digits and '-', '_', '.', ':'. No spaces, so it can be part of a composite key or a URL path.
func Identifier(name, v string, max int) error {
	if err := sized(name, v, max, MaxIdentifier); err != nil {
		return err
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.' || c == ':') {
			return refuse(name, "must contain only letters, digits, '-', '_', '.' and ':'")
		}
	}
	return nil
}

// Reference checks a caller-chosen reference or key: 1 to max bytes (0 means MaxReference) of
// printable UTF-8 with no whitespace, so two references that look alike are alike.
func Reference(name, v string, max int) error {
	if err := sized(name, v, max, MaxReference); err != nil {
		return err
	}
	if err := printable(name, v); err != nil {
		return err
	}
	if strings.IndexFunc(v, unicode.IsSpace) >= 0 {
		return refuse(name, "must not contain spaces")
	}
	return nil
}

// Name checks a person's, organization's or account holder's name: printable UTF-8, not blank,
// at most MaxName bytes, and no invisible formatting characters (see InvisibleInName). Inner
// spaces are allowed; leading and trailing ones are the caller's to trim.
func Name(name, v string) error {
	if strings.TrimSpace(v) == "" {
		return refuse(name, "is required")
	}
	if len(v) > MaxName {
		return refuse(name, "must be at most %d bytes", MaxName)
	}
	if err := printable(name, v); err != nil {
		return err
	}
	rs := []rune(v)
	for i, r := range rs {
		if InvisibleInName(rs, i) {
			return refuse(name, "must not contain invisible formatting characters (U+%04X): zero-width spaces and joiners, "+
				"soft hyphens, byte order marks, variation selectors and tag characters have no place in a name", r)
		}
	}
	return nil
}

// InvisibleInName reports whether rs[i] is a character that changes nothing a reader sees and so
// has no place in a name: format characters (Cf: zero-width space, word joiner, soft hyphen, BOM,
// tag characters, …), variation selectors and the other default-ignorable code points (Hangul
// fillers, the combining grapheme joiner). They let two names that look the same differ, which
// is how a listed name was slipped past sanctions screening (issue 21). The exception is the
// zero-width joiner and non-joiner between two letters of a script that uses them to choose
// letter forms (Arabic, Syriac, N'Ko, Mongolian and the Indic scripts): there they are part of
// how the name is spelt; screening ignores them.
func InvisibleInName(rs []rune, i int) bool {
	r := rs[i]
	if !unicode.Is(unicode.Cf, r) && !unicode.Is(unicode.Variation_Selector, r) &&
		!unicode.Is(unicode.Other_Default_Ignorable_Code_Point, r) {
		return false
	}
	if (r == 0x200C || r == 0x200D) && i > 0 && i+1 < len(rs) {
		return !joiningLetter(rs[i-1]) || !joiningLetter(rs[i+1])
	}
	return true
}

// joinerScripts are the scripts whose spelling may need ZWJ or ZWNJ between letters.
var joinerScripts = []*unicode.RangeTable{
	unicode.Arabic, unicode.Syriac, unicode.Nko, unicode.Mongolian, unicode.Devanagari, unicode.Bengali,
	unicode.Gurmukhi, unicode.Gujarati, unicode.Oriya, unicode.Tamil, unicode.Telugu, unicode.Kannada,
	unicode.Malayalam, unicode.Sinhala,
}

// joiningLetter: a letter or combining mark of a joiner script (a mark of the Inherited script,
// such as an Arabic vowel sign, counts with the letter it sits on).
func joiningLetter(r rune) bool {
	if !unicode.IsLetter(r) && !unicode.IsMark(r) {
		return false
	}
	return unicode.In(r, joinerScripts...) || unicode.Is(unicode.Inherited, r)
}

// Text checks optional free text: printable UTF-8 (line breaks and tabs allowed), at most max
// bytes (0 means MaxText). Empty is valid; a caller that needs a value checks for it.
func Text(name, v string, max int) error {
	if max <= 0 || max > MaxText {
		max = MaxText
	}
	if len(v) > max {
		return refuse(name, "must be at most %d bytes", max)
	}
	for _, r := range v {
		if r == '\n' || r == '\t' || r == '\r' {
			continue
		}
		if err := checkRune(name, r); err != nil {
			return err
		}
	}
	if !utf8.ValidString(v) {
		return refuse(name, "must be valid UTF-8")
	}
	return nil
}

// sized checks that a required value is present and within max bytes, where max is bounded by
// the kind's own limit (0, or anything looser, means the kind's limit).
func sized(name, v string, max, kindMax int) error {
	if max <= 0 || max > kindMax {
		max = kindMax
	}
	if v == "" {
		return refuse(name, "is required")
	}
	if len(v) > max {
		return refuse(name, "must be at most %d bytes", max)
	}
	return nil
}

func printable(name, v string) error {
	if !utf8.ValidString(v) {
		return refuse(name, "must be valid UTF-8")
	}
	for _, r := range v {
		if err := checkRune(name, r); err != nil {
			return err
		}
	}
	return nil
}

func checkRune(name string, r rune) error {
	switch {
	case r == utf8.RuneError:
		return refuse(name, "must be valid UTF-8")
	case unicode.IsControl(r):
		return refuse(name, "must not contain control characters")
	case r >= 0x202A && r <= 0x202E, r >= 0x2066 && r <= 0x2069, r == 0x200E, r == 0x200F:
		return refuse(name, "must not contain bidirectional control characters")
	case Noncharacter(r):
		return refuse(name, "must not contain Unicode noncharacters")
	}
	return nil
}

// Noncharacter reports whether r is one of the 66 Unicode noncharacters: U+FDD0..U+FDEF and
// U+xxFFFE, U+xxFFFF in every plane. They are for a program's internal use, never for
// interchange; XML 1.0 cannot carry U+FFFE and U+FFFF at all.
func Noncharacter(r rune) bool {
	return r >= 0xFDD0 && r <= 0xFDEF || r >= 0 && r <= unicode.MaxRune && r&0xFFFE == 0xFFFE
}

// MaxEmail is RFC 5321's bound on a forward path.
const MaxEmail = 254

// Email checks an e-mail address as a sign-in identity: at most MaxEmail bytes of printable ASCII
// (internationalized addresses are refused rather than half-supported), exactly one '@', a local
// part of 1 to 64 bytes and a domain with at least one dot, no spaces, quotes, angle brackets,
// commas or semicolons (nothing that could be read as a second address or a display name).
// Callers compare addresses lower-cased.
func Email(name, v string) error {
	if err := sized(name, v, MaxEmail, MaxEmail); err != nil {
		return err
	}
	at := strings.IndexByte(v, '@')
	if at <= 0 || at != strings.LastIndexByte(v, '@') || at > 64 {
		return refuse(name, "must be an e-mail address")
	}
	domain := v[at+1:]
	if len(domain) < 3 || !strings.Contains(domain, ".") || strings.HasPrefix(domain, ".") ||
		strings.HasSuffix(domain, ".") || strings.Contains(domain, "..") {
		return refuse(name, "must be an e-mail address")
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c <= ' ' || c >= 0x7f || strings.IndexByte(`"<>(),;:\[]`, c) >= 0 {
			return refuse(name, "must be an e-mail address")
		}
	}
	return nil
}

// Phone checks a phone number in E.164 form: '+', a non-zero digit, 7 to 15 digits in all.
func Phone(name, v string) error {
	if len(v) < 8 || len(v) > 16 || v[0] != '+' || v[1] == '0' {
		return refuse(name, "must be an E.164 phone number such as +251911234567")
	}
	for i := 1; i < len(v); i++ {
		if v[i] < '0' || v[i] > '9' {
			return refuse(name, "must be an E.164 phone number such as +251911234567")
		}
	}
	return nil
}
