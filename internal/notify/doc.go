// Package notify owns how Wagerail reaches a person outside the API: the e-mails and text messages
// that carry a verification link, a password-reset or magic-link token, an invitation, an
// account-setup link or a phone OTP. Callers build an Email or an SMS (with its Purpose and the
// Secret it carries) and hand it to a Mailer or a Texter; they never know which sender is behind it.
//
// Senders:
//   - Log: the production default when nothing is configured. It delivers nothing: it writes one
//     warning per message naming the purpose and the masked recipient, never the text or the secret.
//   - DevInbox: the developer's inbox for `make run`. Each message is appended whole to a JSONL file
//     (0600, in a 0700 directory) so the link or code can be read back (ReadDevInbox, Latest), and a
//     redacted line is logged.
//   - Memory: records messages in process, for end-to-end tests that need the code a user would get.
//   - SMTP: e-mail through a submission server (STARTTLS, implicit TLS, or plain for a local catcher).
//
// There is no SMS provider yet: in production a Texter is the Log sender, so phone OTPs are not
// delivered until one is added here behind the Texter interface.
//
// What this package must not do: log a message's text or secret, anywhere (Email and SMS mask
// themselves when logged), or decide what a message says; the caller writes the text.
package notify
