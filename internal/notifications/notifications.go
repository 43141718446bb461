package notifications

import (
	"errors"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Category groups events for the user's choices.
type Category string

const (
	CategoryEWA     Category = "EWA"
	CategoryLoan    Category = "LOAN"
	CategoryPayroll Category = "PAYROLL"
	CategoryKYC     Category = "KYC"
	CategoryDispute Category = "DISPUTE"
)

// Categories are every category, in the order the preferences are listed.
var Categories = []Category{CategoryEWA, CategoryLoan, CategoryPayroll, CategoryKYC, CategoryDispute}

// Channel is how a message reaches the user.
type Channel string

const (
	InApp Channel = "IN_APP"
	Email Channel = "EMAIL"
	SMS   Channel = "SMS"
)

// Channels are every channel, in the order the preferences are listed.
var Channels = []Channel{InApp, Email, SMS}

// Language is the language a user's messages are written in.
type Language string

const (
	English Language = "en"
	Amharic Language = "am"
)

// Valid reports whether c is a known category.
func (c Category) Valid() bool {
	switch c {
	case CategoryEWA, CategoryLoan, CategoryPayroll, CategoryKYC, CategoryDispute:
		return true
	}
	return false
}

// Valid reports whether c is a known channel.
func (c Channel) Valid() bool { return c == InApp || c == Email || c == SMS }

// Valid reports whether l is a language we have templates for.
func (l Language) Valid() bool { return l == English || l == Amharic }

// DefaultEnabled is a channel's setting for a user who has not chosen: in-app and e-mail on, SMS
// off (a text message costs money and reaches a phone others may see).
func DefaultEnabled(ch Channel) bool { return ch != SMS }

// Preference is one (category, channel) choice.
type Preference struct {
	Category Category
	Channel  Channel
	Enabled  bool
}

// Preferences are a user's choices in a tenant: every (category, channel), defaults filled in.
type Preferences struct {
	Language Language
	Items    []Preference
}

// Enabled reports the choice for (cat, ch).
func (p Preferences) Enabled(cat Category, ch Channel) bool {
	for _, it := range p.Items {
		if it.Category == cat && it.Channel == ch {
			return it.Enabled
		}
	}
	return DefaultEnabled(ch)
}

// Defaults are the preferences of a user who has not chosen anything.
func Defaults() Preferences {
	p := Preferences{Language: English}
	for _, cat := range Categories {
		for _, ch := range Channels {
			p.Items = append(p.Items, Preference{Category: cat, Channel: ch, Enabled: DefaultEnabled(ch)})
		}
	}
	return p
}

// Errors of the store.
var (
	// ErrNotFound: no such notification of the user in the tenant (another user's or tenant's
	// included: it is not told apart).
	ErrNotFound = errors.New("notifications: not found")
	// ErrInvalid: a preference names an unknown category, channel or language.
	ErrInvalid = errors.New("notifications: invalid preference")
)

// clean makes a user-supplied value safe to put in any message: control characters (line breaks
// included: none may reach an e-mail subject or split an SMS), bidirectional controls, invisible
// formatting characters and angle brackets (no markup, should a message ever be rendered as HTML)
// become spaces, runs of spaces one, and the result is at most max runes.
func clean(s string, max int) string {
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, " ")
	}
	var b strings.Builder
	space, n := false, 0
	for _, r := range s {
		if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || unicode.IsSpace(r) || r == '<' || r == '>' ||
			unicode.Is(unicode.Variation_Selector, r) || r == utf8.RuneError {
			space = b.Len() > 0
			continue
		}
		if n >= max {
			break
		}
		if space {
			b.WriteByte(' ')
			n++
			space = false
		}
		b.WriteRune(r)
		n++
	}
	return strings.TrimSpace(b.String())
}
