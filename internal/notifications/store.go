package notifications

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/wagerail/wagerail/internal/identity"
	"github.com/wagerail/wagerail/internal/platform/db"
)

// Load returns userID's preferences in tenant, defaults filled in for what they never chose. q
// runs in the tenant's transaction.
func Load(ctx context.Context, q db.Querier, tenant, userID string) (Preferences, error) {
	p := Defaults()
	var lang string
	err := q.QueryRow(ctx, `SELECT language FROM app.notification_settings WHERE tenant_id = $1 AND user_id = $2`,
		tenant, userID).Scan(&lang)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
	case err != nil:
		return p, fmt.Errorf("notifications: settings: %w", err)
	default:
		p.Language = Language(lang)
	}
	rows, err := q.Query(ctx, `SELECT category, channel, enabled FROM app.notification_preferences
		WHERE tenant_id = $1 AND user_id = $2`, tenant, userID)
	if err != nil {
		return p, fmt.Errorf("notifications: preferences: %w", err)
	}
	set, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Preference, error) {
		var x Preference
		return x, r.Scan(&x.Category, &x.Channel, &x.Enabled)
	})
	if err != nil {
		return p, fmt.Errorf("notifications: preferences: %w", err)
	}
	for i, it := range p.Items {
		for _, s := range set {
			if s.Category == it.Category && s.Channel == it.Channel {
				p.Items[i].Enabled = s.Enabled
			}
		}
	}
	return p, nil
}

// Save stores userID's choices in tenant: lang when not "", and each item given (others keep their
// value). Every value is checked first; ErrInvalid changes nothing.
func Save(ctx context.Context, tx db.Writer, tenant, userID string, lang Language, items []Preference, now time.Time) error {
	if lang != "" && !lang.Valid() {
		return fmt.Errorf("%w: language", ErrInvalid)
	}
	for _, it := range items {
		if !it.Category.Valid() || !it.Channel.Valid() {
			return fmt.Errorf("%w: category or channel", ErrInvalid)
		}
	}
	if lang != "" {
		if _, err := tx.Exec(ctx, `INSERT INTO app.notification_settings (tenant_id, user_id, language, updated_at)
			VALUES ($1, $2, $3, $4) ON CONFLICT (tenant_id, user_id) DO UPDATE SET language = EXCLUDED.language,
			updated_at = EXCLUDED.updated_at`, tenant, userID, string(lang), now); err != nil {
			return fmt.Errorf("notifications: save language: %w", err)
		}
	}
	for _, it := range items {
		if _, err := tx.Exec(ctx, `INSERT INTO app.notification_preferences (tenant_id, user_id, category, channel, enabled, updated_at)
			VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (tenant_id, user_id, category, channel) DO UPDATE
			SET enabled = EXCLUDED.enabled, updated_at = EXCLUDED.updated_at`,
			tenant, userID, string(it.Category), string(it.Channel), it.Enabled, now); err != nil {
			return fmt.Errorf("notifications: save preference: %w", err)
		}
	}
	return nil
}

// Notification is one message in a user's in-app inbox.
type Notification struct {
	ID        string
	TenantID  string
	UserID    string
	EventID   string
	EventType string
	Category  Category
	Title     string
	Body      string
	Language  Language
	CreatedAt time.Time
	ReadAt    *time.Time
}

const inboxColumns = `id, tenant_id, user_id, event_id::text, event_type, category, title, body, language, created_at, read_at`

func scanNotification(r pgx.Row) (Notification, error) {
	var n Notification
	err := r.Scan(&n.ID, &n.TenantID, &n.UserID, &n.EventID, &n.EventType, &n.Category, &n.Title, &n.Body, &n.Language,
		&n.CreatedAt, &n.ReadAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return n, ErrNotFound
	}
	return n, err
}

// Inbox lists userID's notifications in tenant, newest first, after cursor (a previous page's
// last id; "" for the first page), at most limit.
func Inbox(ctx context.Context, q db.Querier, tenant, userID, cursor string, unreadOnly bool, limit int) ([]Notification, error) {
	rows, err := q.Query(ctx, `SELECT `+inboxColumns+` FROM app.notifications
		WHERE tenant_id = $1 AND user_id = $2 AND ($3 = '' OR id < $3) AND (NOT $4 OR read_at IS NULL)
		ORDER BY id DESC LIMIT $5`, tenant, userID, cursor, unreadOnly, limit)
	if err != nil {
		return nil, fmt.Errorf("notifications: inbox: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Notification, error) { return scanNotification(r) })
	if err != nil {
		return nil, fmt.Errorf("notifications: inbox: %w", err)
	}
	return out, nil
}

// MarkRead marks userID's notification id in tenant read (once: a second call keeps the first
// time) and returns it; ErrNotFound when it is not theirs.
func MarkRead(ctx context.Context, tx db.Querier, tenant, userID, id string, now time.Time) (Notification, error) {
	return scanNotification(tx.QueryRow(ctx, `UPDATE app.notifications SET read_at = coalesce(read_at, $4)
		WHERE tenant_id = $1 AND user_id = $2 AND id = $3 RETURNING `+inboxColumns, tenant, userID, id, now))
}

// newID is a notification id: ntf_ and a UUIDv7, so id order is creation order.
func newID() string { return "ntf_" + identity.NewID() }

// UnreadCount counts userID's unread notifications in tenant.
func UnreadCount(ctx context.Context, q db.Writer, tenant, userID string) (int64, error) {
	var n int64
	if err := q.QueryRow(ctx, `SELECT count(*) FROM app.notifications WHERE tenant_id = $1 AND user_id = $2 AND read_at IS NULL`,
		tenant, userID).Scan(&n); err != nil {
		return 0, fmt.Errorf("notifications: unread count: %w", err)
	}
	return n, nil
}
