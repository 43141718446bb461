package uploads_test

import (
	"bytes"
	"strings"
	"testing"
	"testing/iotest"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/platform/field"
	"github.com/wagerail/wagerail/internal/uploads"
)

// Samples of each allowed type: the magic bytes the sniffer knows, then filler.
var (
	samplePDF  = append([]byte("%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj\n"), bytes.Repeat([]byte{0x42}, 2000)...)
	samplePNG  = append([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"), bytes.Repeat([]byte{0x07}, 2000)...)
	sampleJPEG = append([]byte("\xff\xd8\xff\xe0\x00\x10JFIF\x00"), bytes.Repeat([]byte{0x00}, 2000)...)
	sampleCSV  = []byte("\ufefffirstName,lastName,city\nAbebe,Kebede,አዲስ አበባ\n\"Tsehay\",\"Bekele, Jr\",Adama\r\n")
)

var now = time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)

func receive(t *testing.T, s uploads.Store, declared string, body []byte, max int64) (uploads.Object, error) {
	t.Helper()
	return uploads.Receive(t.Context(), s, uploads.Upload{TenantID: tenant, UploadedBy: "usr_1", FileName: "doc.bin",
		DeclaredType: declared, Body: bytes.NewReader(body), MaxBytes: max, Now: now})
}

func TestReceiveAcceptsEachAllowedType(t *testing.T) {
	t.Parallel()
	s, _ := newFS(t)
	for _, tc := range []struct {
		declared, want string
		body           []byte
	}{
		{"application/pdf", "application/pdf", samplePDF},
		{"image/png", "image/png", samplePNG},
		{"image/jpeg", "image/jpeg", sampleJPEG},
		{"text/csv", "text/csv", sampleCSV},
		{"text/csv; charset=UTF-8", "text/csv", sampleCSV},
		{"Application/PDF", "application/pdf", samplePDF},
	} {
		obj, err := receive(t, s, tc.declared, tc.body, 0)
		require.NoError(t, err, tc.declared)
		require.Equal(t, tc.want, obj.ContentType)
		require.Equal(t, sum(tc.body), obj.SHA256, "the recorded hash is the bytes' SHA-256")
		require.Equal(t, int64(len(tc.body)), obj.SizeBytes)
		require.True(t, uploads.ValidKey(obj.Key))
		require.Equal(t, "doc.bin", obj.FileName)
		require.Equal(t, now, obj.CreatedAt)
		require.NoError(t, uploads.VerifyContent(t.Context(), s, obj))
	}
}

// TestReceiveRefuses: every refusal stores nothing.
func TestReceiveRefuses(t *testing.T) {
	t.Parallel()
	s, dir := newFS(t)
	csvWith := func(tail string) []byte {
		return append(bytes.Repeat([]byte("a,b,c\n"), 200), tail...) // past the 512 bytes the sniffer reads
	}
	for _, tc := range []struct {
		name, declared string
		body           []byte
		max            int64
		want           error
	}{
		{"png declared as pdf", "application/pdf", samplePNG, 0, uploads.ErrTypeMismatch},
		{"pdf declared as png", "image/png", samplePDF, 0, uploads.ErrTypeMismatch},
		{"jpeg declared as csv", "text/csv", sampleJPEG, 0, uploads.ErrTypeMismatch},
		{"pdf declared as csv", "text/csv", samplePDF, 0, uploads.ErrTypeMismatch},
		{"html declared as csv", "text/csv", []byte("<html><script>alert(1)</script></html>"), 0, uploads.ErrTypeMismatch},
		{"text declared as jpeg", "image/jpeg", sampleCSV, 0, uploads.ErrTypeMismatch},
		{"utf-16 csv", "text/csv", []byte("\xff\xfea\x00,\x00b\x00"), 0, uploads.ErrTypeMismatch},
		{"csv with NUL after the sniffed bytes", "text/csv", csvWith("x\x00y\n"), 0, uploads.ErrTypeMismatch},
		{"csv with invalid UTF-8 after the sniffed bytes", "text/csv", csvWith("caf\xe9\n"), 0, uploads.ErrTypeMismatch},
		{"csv cut inside a character", "text/csv", csvWith("\xe1\x88"), 0, uploads.ErrTypeMismatch},
		{"csv with a control byte", "text/csv", csvWith("\x01"), 0, uploads.ErrTypeMismatch},
		{"empty", "application/pdf", nil, 0, uploads.ErrEmpty},
		{"over the limit", "application/pdf", samplePDF, int64(len(samplePDF)) - 1, uploads.ErrTooLarge},
		{"over a limit below the sniffed bytes", "text/csv", sampleCSV, 10, uploads.ErrTooLarge},
		{"html", "text/html", []byte("<html></html>"), 0, uploads.ErrUnsupportedType},
		{"svg", "image/svg+xml", []byte("<svg/>"), 0, uploads.ErrUnsupportedType},
		{"octet-stream", "application/octet-stream", samplePDF, 0, uploads.ErrUnsupportedType},
		{"no type", "", samplePDF, 0, uploads.ErrUnsupportedType},
		{"garbage type", "pdf", samplePDF, 0, uploads.ErrUnsupportedType},
		{"latin-1 csv", "text/csv; charset=iso-8859-1", sampleCSV, 0, uploads.ErrUnsupportedType},
		{"charset on a pdf", "application/pdf; charset=utf-8", samplePDF, 0, uploads.ErrUnsupportedType},
	} {
		_, err := receive(t, s, tc.declared, tc.body, tc.max)
		require.ErrorIs(t, err, tc.want, tc.name)
	}
	for _, e := range entries(t, dir) {
		require.Equal(t, tenant, e, "nothing stored (at most the tenant's directory)")
	}

	// At the limit exactly is fine.
	_, err := receive(t, s, "application/pdf", samplePDF, int64(len(samplePDF)))
	require.NoError(t, err)
}

// TestCSVCheckedAcrossReads: a multi-byte character cut by the reader's chunking is still valid.
func TestCSVCheckedAcrossReads(t *testing.T) {
	t.Parallel()
	s, _ := newFS(t)
	body := append(bytes.Repeat([]byte("ሰላም,ዓለም\n"), 100), "ጤና ይስጥልኝ\n"...)
	obj, err := uploads.Receive(t.Context(), s, uploads.Upload{TenantID: tenant, UploadedBy: "usr_1", FileName: "a.csv",
		DeclaredType: "text/csv", Body: iotest.OneByteReader(bytes.NewReader(body)), Now: now})
	require.NoError(t, err)
	require.Equal(t, sum(body), obj.SHA256)
}

// FuzzCSVCheck: a CSV is accepted exactly when it is valid UTF-8 without binary control bytes
// (what http.DetectContentType calls text), however the reads cut it.
func FuzzCSVCheck(f *testing.F) {
	for _, s := range []string{"a,b\n", "ሰላም", "\xe1\x88", "a\x00", "\xef\xbb\xbfa", "\xed\xa0\x80", "\x1b[0m", "<html>"} {
		f.Add([]byte(s), uint8(1))
	}
	dir := f.TempDir()
	s, err := uploads.NewFS(dir)
	require.NoError(f, err)
	f.Fuzz(func(t *testing.T, body []byte, chunk uint8) {
		var r = bytes.NewReader(body)
		in := iotest.HalfReader(r)
		if chunk%2 == 1 {
			in = iotest.OneByteReader(r)
		}
		obj, err := uploads.Receive(t.Context(), s, uploads.Upload{TenantID: tenant, UploadedBy: "usr_1", FileName: "f.csv",
			DeclaredType: "text/csv", Body: in, Now: now})
		text := utf8.Valid(body) && !bytes.ContainsFunc(body, func(r rune) bool {
			return r <= 0x08 || r == 0x0B || r >= 0x0E && r <= 0x1A || r >= 0x1C && r <= 0x1F
		})
		switch {
		case len(body) == 0:
			require.ErrorIs(t, err, uploads.ErrEmpty)
		case err == nil:
			require.True(t, text, "accepted %q", body)
			require.Equal(t, sum(body), obj.SHA256)
			require.NoError(t, s.Delete(t.Context(), tenant, obj.Key))
		default:
			require.ErrorIs(t, err, uploads.ErrTypeMismatch)
			// The sniffer also refuses text it takes for HTML, XML or a PDF; anything else it
			// refused must really not be text.
			if text {
				_, ok := uploads.Sniff("text/csv", body[:min(len(body), 512)])
				require.False(t, ok, "refused text %q", body)
			}
		}
	})
}

func TestCleanFileName(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"payslip.pdf":                     "payslip.pdf",
		"../../etc/passwd":                "passwd",
		`C:\Users\abebe\id card.png`:      "id card.png",
		"..":                              "upload",
		"":                                "upload",
		"   ":                             "upload",
		".bashrc":                         "bashrc",
		"evil\u202egnp.exe":               "evil_gnp.exe",
		"a\x00b\nc\td.csv":                "a_b_c_d.csv",
		"bad\xffname.pdf":                 "bad_name.pdf",
		`say "hi".pdf`:                    "say _hi_.pdf",
		"መታወቂያ.jpg":                       "መታወቂያ.jpg",
		"zero\u200bwidth.png":             "zero_width.png",
		"grapheme\u034fjoiner.pdf":        "grapheme_joiner.pdf",
		"\u3164filler.pdf":                "_filler.pdf",
		strings.Repeat("ሀ", 200) + ".pdf": strings.Repeat("ሀ", 85),
	} {
		require.Equal(t, want, uploads.CleanFileName(in), "%q", in)
	}
}

// FuzzCleanFileName: a cleaned name is always a valid field.Name within the bound, with no path
// separator, quote or leading dot.
func FuzzCleanFileName(f *testing.F) {
	for _, s := range []string{"a.pdf", "../x", "\x00", "\u202e", "\xff", strings.Repeat("ሀ", 300), " . "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		out := uploads.CleanFileName(in)
		require.NoError(t, field.Name("fileName", out), "%q → %q", in, out)
		require.LessOrEqual(t, len(out), uploads.MaxFileName)
		require.False(t, strings.ContainsAny(out, "/\\\""), "%q", out)
		require.False(t, strings.HasPrefix(out, "."), "%q", out)
		require.Equal(t, strings.TrimSpace(out), out)
	})
}

func bytesReader(b []byte) *bytes.Reader { return bytes.NewReader(b) }
