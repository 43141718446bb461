package demorequests_test

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/demorequests"
	"github.com/wagerail/wagerail/internal/notify"
)

// FuzzSalesMail: whatever payload reaches the sales consumer, ParseReceived refuses it or the mail
// built from it has a one-line subject (no control character, valid UTF-8, within
// notify.MaxSubject) and quotes every line of the prospect's message, so nothing a prospect types
// can add a header or pass for one of the mail's own lines.
func FuzzSalesMail(f *testing.F) {
	f.Add(`{"requestId":"demo_1","name":"Abebe Kebede","company":"Abay Textiles","email":"abebe@example.com","phone":null,"employeeCount":40,"message":"hello","receivedAt":"2026-12-07T01:00:00Z"}`)
	f.Add(`{"requestId":"demo_1","name":"Abebe\r\nBcc: x@y","company":"Abay","email":"a@example.com","phone":null,"employeeCount":null,"message":null,"receivedAt":"2026-12-07T01:00:00Z"}`)
	f.Add(`{"requestId":"demo_1","name":"Abebe","company":"Abay","email":"a@example.com","phone":"+251911234567","employeeCount":1,"message":"line\r\nCompany: forged\rE-mail: x","receivedAt":"2026-12-07T01:00:00Z"}`)
	f.Add(`{"requestId":"demo_1","name":"` + strings.Repeat("አበበ ", 60) + `","company":"` + strings.Repeat("x", 300) + `","email":"a@example.com","receivedAt":"2026-12-07T01:00:00Z"}`)
	f.Add(`not json`)
	f.Fuzz(func(t *testing.T, payload string) {
		p, err := demorequests.ParseReceived([]byte(payload))
		if err != nil {
			return
		}
		m, err := demorequests.SalesEmail("sales@example.com", p)
		if err != nil {
			return
		}
		require.True(t, utf8.ValidString(m.Subject), "%q", m.Subject)
		require.LessOrEqual(t, len(m.Subject), notify.MaxSubject)
		for _, r := range m.Subject {
			require.False(t, unicode.IsControl(r), "a control character in the subject %q", m.Subject)
		}
		_, quoted, ok := strings.Cut(m.Text, "\nMessage:\n")
		require.True(t, ok, m.Text)
		quoted, _, _ = strings.Cut(quoted, "\n\nThe platform admins'")
		if p.Message != nil {
			for l := range strings.SplitSeq(strings.TrimSuffix(quoted, "\n"), "\n") {
				require.True(t, strings.HasPrefix(l, "> "), "an unquoted line %q in %q", l, m.Text)
			}
		}
	})
}
