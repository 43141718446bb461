package notifications

import (
	"context"
	"fmt"

	"github.com/wagerail/wagerail/internal/notify"
)

// kindTest is the message a platform admin sends to check a channel's sender.
const kindTest = "test"

// SendTest sends the test message in lang to the address or number to on ch (Email or SMS)
// through that channel's sender, the one the notification consumer uses: how a platform admin
// checks that e-mails and texts leave (POST /api/notifications/test). reference is in the text,
// so the receiver can tell this message from another, and names it for the gateway's
// de-duplication. An invalid recipient is notify.ErrInvalidMessage (or ErrHeaderInjection);
// any other error is the sender's failure.
func SendTest(ctx context.Context, mailer notify.Mailer, texter notify.Texter, ch Channel, to string, lang Language, reference string) error {
	m, err := render(kindTest, "", lang, facts{Reference: clean(reference, 64)})
	if err != nil {
		return err
	}
	switch ch {
	case Email:
		return mailer.SendEmail(ctx, notify.Email{To: to, Subject: m.Title, Text: m.Body, Purpose: notify.Notification})
	case SMS:
		return texter.SendSMS(ctx, notify.SMS{To: to, Text: m.Body, Purpose: notify.Notification, Reference: reference})
	}
	return fmt.Errorf("%w: a test message goes by EMAIL or SMS, not %s", notify.ErrInvalidMessage, ch)
}
