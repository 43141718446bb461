package uploads

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"mime"
	"net/http"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/wagerail/wagerail/internal/platform/field"
)

// DefaultMaxBytes is the size limit of one upload unless the caller sets another.
const DefaultMaxBytes int64 = 10 << 20

// MaxFileName bounds a cleaned file name, in bytes (the business KYC document's fileName bound).
const MaxFileName = 255

// sniffLen is how much http.DetectContentType reads.
const sniffLen = 512

// AllowedTypes are the media types an upload may declare: documents and photos for KYC, CSV for
// imports. Nothing a browser would run (HTML, SVG, scripts) is among them.
var AllowedTypes = []string{"application/pdf", "image/jpeg", "image/png", "text/csv"}

// MediaType reads a declared Content-Type and returns its media type when it is one of
// AllowedTypes (ErrUnsupportedType otherwise). A charset parameter is allowed on text/csv only,
// and only utf-8: the stored bytes are checked as UTF-8.
func MediaType(declared string) (string, error) {
	mt, params, err := mime.ParseMediaType(declared)
	if err != nil || !slices.Contains(AllowedTypes, mt) {
		return "", ErrUnsupportedType
	}
	if cs, ok := params["charset"]; ok && (mt != "text/csv" || !strings.EqualFold(cs, "utf-8")) {
		return "", ErrUnsupportedType
	}
	return mt, nil
}

// Sniff says whether the first bytes of a file (at least the first 512, or all of a shorter
// file) are what the declared media type mt says, and what http.DetectContentType made of them.
// A CSV must sniff as UTF-8 plain text (not HTML, XML, PDF, UTF-16 or binary); the rest of it is
// checked as it is stored.
func Sniff(mt string, head []byte) (sniffed string, ok bool) {
	sniffed = http.DetectContentType(head)
	if mt == "text/csv" {
		return sniffed, sniffed == "text/plain; charset=utf-8"
	}
	return sniffed, sniffed == mt
}

// Upload is one file handed in for storing.
type Upload struct {
	TenantID   string
	UploadedBy string
	// FileName is the client's name for the file, DeclaredType its declared Content-Type; both
	// are checked here (CleanFileName, MediaType).
	FileName     string
	DeclaredType string
	Body         io.Reader
	// MaxBytes is the size limit (0: DefaultMaxBytes).
	MaxBytes int64
	Now      time.Time
}

// Receive checks u and stores it under a new key: the declared type must be allowed
// (ErrUnsupportedType) and agree with the bytes (ErrTypeMismatch; a CSV must be UTF-8 text
// without binary control bytes throughout), the file must not be empty (ErrEmpty) or over
// MaxBytes (ErrTooLarge). The bytes are hashed as they are stored. On any error nothing is
// stored. The returned Object is not recorded yet: Record it in the tenant's transaction, and
// Delete the stored bytes when that fails.
//
// A read error of u.Body is returned wrapped, so the caller can tell its own input's failures.
func Receive(ctx context.Context, store Store, u Upload) (Object, error) {
	mt, err := MediaType(u.DeclaredType)
	if err != nil {
		return Object{}, err
	}
	max := u.MaxBytes
	if max <= 0 {
		max = DefaultMaxBytes
	}
	head := make([]byte, sniffLen)
	n, err := io.ReadFull(u.Body, head)
	switch {
	case err == io.EOF:
		return Object{}, ErrEmpty
	case err != nil && err != io.ErrUnexpectedEOF:
		return Object{}, fmt.Errorf("uploads: read: %w", err)
	}
	head = head[:n]
	sniffed, ok := Sniff(mt, head)
	if !ok {
		return Object{}, fmt.Errorf("%w: declared %s, the content looks like %s", ErrTypeMismatch, mt, sniffed)
	}
	var body io.Reader = &capReader{r: io.MultiReader(bytes.NewReader(head), u.Body), max: max}
	if mt == "text/csv" {
		body = &textReader{r: body}
	}
	obj, err := store.Put(ctx, u.TenantID, NewKey(), body, -1, mt)
	if err != nil {
		return Object{}, err
	}
	obj.FileName = CleanFileName(u.FileName)
	obj.SniffedType = sniffed
	obj.UploadedBy = u.UploadedBy
	obj.CreatedAt = u.Now
	return obj, nil
}

// CleanFileName makes a client's file name safe to store and to show back: the last element of
// any path (either separator); every character that is not printable (controls, format
// characters such as zero-width and bidirectional overrides, spaces other than ' ', invalid
// UTF-8), every invisible one a name refuses and every '"' replaced by '_' (replaceUnshown);
// spaces and leading dots trimmed; at most MaxFileName bytes; "upload" when nothing is left.
// The result passes field.Name.
func CleanFileName(name string) string {
	if i := strings.LastIndexAny(name, `/\`); i >= 0 {
		name = name[i+1:]
	}
	if len(name) > 4*MaxFileName {
		name = name[:4*MaxFileName] // far past the bound: the rest would be cut below anyway
	}
	s := strings.TrimLeft(strings.TrimSpace(replaceUnshown(name)), ". ")
	for len(s) > MaxFileName {
		_, size := utf8.DecodeLastRuneInString(s)
		s = s[:len(s)-size]
	}
	// Again: the cut may have left a joiner without the letter after it, which makes it one
	// that has no place in a name.
	s = strings.TrimSpace(replaceUnshown(s))
	if s == "" {
		return "upload"
	}
	return s
}

// replaceUnshown is s with '_' for every character a name may not show: invalid UTF-8, '"',
// what is not printable, and the invisible ones field.Name refuses where they stand
// (field.InvisibleInName: the combining grapheme joiner, variation selectors, Hangul fillers, a
// joiner outside a word of a script that spells with it).
func replaceUnshown(s string) string {
	rs := []rune(s)
	out := make([]rune, len(rs))
	for i, r := range rs {
		if r == utf8.RuneError || r == '"' || !unicode.IsPrint(r) || field.InvisibleInName(rs, i) {
			r = '_'
		}
		out[i] = r
	}
	return string(out)
}

// capReader fails with ErrTooLarge as soon as more than max bytes have come through.
type capReader struct {
	r      io.Reader
	n, max int64
}

func (c *capReader) Read(p []byte) (int, error) {
	if c.n > c.max {
		return 0, ErrTooLarge
	}
	if room := c.max + 1 - c.n; int64(len(p)) > room {
		p = p[:room]
	}
	k, err := c.r.Read(p)
	c.n += int64(k)
	if c.n > c.max {
		return k, ErrTooLarge
	}
	return k, err
}

// textReader fails with ErrTypeMismatch on invalid UTF-8 or a byte http.DetectContentType counts
// as binary (NUL and the other C0 controls but tab, line feed, form feed, carriage return and
// escape), anywhere in the stream: the sniffer only saw the first 512 bytes.
type textReader struct {
	r     io.Reader
	carry []byte // the start of a character cut by the previous read
}

func (t *textReader) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	if n > 0 {
		if !t.check(p[:n]) {
			return 0, fmt.Errorf("%w: the CSV is not UTF-8 text", ErrTypeMismatch)
		}
	}
	if err == io.EOF && len(t.carry) > 0 {
		return n, fmt.Errorf("%w: the CSV ends inside a UTF-8 character", ErrTypeMismatch)
	}
	return n, err
}

func (t *textReader) check(b []byte) bool {
	data := append(t.carry, b...)
	i := 0
	for i < len(data) {
		c := data[i]
		if c < utf8.RuneSelf {
			if c <= 0x08 || c == 0x0B || c >= 0x0E && c <= 0x1A || c >= 0x1C && c <= 0x1F {
				return false
			}
			i++
			continue
		}
		if !utf8.FullRune(data[i:]) {
			break
		}
		r, size := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && size == 1 {
			return false
		}
		i += size
	}
	t.carry = append([]byte(nil), data[i:]...)
	return true
}
