package outbox

import (
	"context"
	"strings"

	"github.com/jackc/pgx/v5"
)

// DefaultGroup is the relay group of a relay whose Config.Group is empty: the worker's. Its
// per-event state is app.outbox's own columns; a named group's is a row of app.outbox_group_state
// (migration app/0061) with the same columns and meaning.
const DefaultGroup = ""

// group is one relay group's delivery state: where it lives and the statements that read and
// move it. Every statement takes the group's name as $1.
type group struct {
	name string
	// table is the state's table, always aliased s; key its column naming the outbox row; only
	// the predicate (on s) that keeps the group's rows.
	table, key, only string
}

func newGroup(name string) group {
	if name == DefaultGroup {
		return group{name: name, table: "app.outbox", key: "id", only: "$1::text = ''"}
	}
	return group{name: name, table: "app.outbox_group_state", key: "outbox_id", only: "s.relay_group = $1"}
}

// sql fills a statement's {state}, {key} and {group}.
func (g group) sql(q string) string {
	return strings.NewReplacer("{state}", g.table, "{key}", g.key, "{group}", g.only).Replace(q)
}

// join registers a named group (it owes every event written from then on) and says whether it
// was new; the default group needs no registration.
func (g group) join(ctx context.Context, tx pgx.Tx) (bool, error) {
	if g.name == DefaultGroup {
		return false, nil
	}
	tag, err := tx.Exec(ctx, `INSERT INTO app.outbox_relay_group (name) VALUES ($1) ON CONFLICT (name) DO NOTHING`, g.name)
	return tag.RowsAffected() > 0, err
}
