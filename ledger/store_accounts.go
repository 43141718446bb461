package ledger

import (
	"context"
	"encoding/base64"
	"errors"
	"regexp"
	"sync"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/wagerail/wagerail/internal/platform/field"
)

var currencyRE = regexp.MustCompile(`^[A-Z]{3}$`)

const accountCols = `a.id::text, a.tenant_id, a.name, a.type, a.normal_side, a.currency, a.created_at`

func scanAccount(row pgx.Row) (Account, error) {
	var a Account
	err := row.Scan(&a.ID, &a.TenantID, &a.Name, &a.Type, &a.NormalSide, &a.Currency, &a.CreatedAt)
	return a, err
}

// EnsureAccount creates the account if (tenant, name) does not exist yet and returns it.
// typ may be empty (the chart's type is used); currency may be empty (ETB).
//
// Errors: ErrMissingTenant, ErrInvalidAccountName, ErrInvalidAccountType, ErrInvalidArgument,
// ErrAccountConflict.
func (s *Store) EnsureAccount(ctx context.Context, tenant, name string, typ AccountType, currency string) (Account, bool, error) {
	chartType, err := ParseAccountName(name)
	if err != nil {
		return Account{}, false, err
	}
	if typ == "" {
		typ = chartType
	}
	if !typ.Valid() {
		return Account{}, false, errorf(ReasonInvalidAccountType, "unknown account type %q", typ)
	}
	if typ != chartType {
		return Account{}, false, errorf(ReasonInvalidAccountType, "%s is a %s account in the chart, not %s", name, chartType, typ)
	}
	if currency == "" {
		currency = DefaultCurrency
	}
	if !currencyRE.MatchString(currency) {
		return Account{}, false, errorf(ReasonInvalidArgument, "currency %q must be three capital letters", currency)
	}
	var acc Account
	created := false
	err = s.inTx(ctx, tenant, nil, func(tx querier) error {
		acc, err = scanAccount(tx.QueryRow(ctx, `
			INSERT INTO ledger.accounts AS a (tenant_id, name, type, currency) VALUES ($1, $2, $3, $4)
			ON CONFLICT (tenant_id, name) DO NOTHING
			RETURNING `+accountCols, tenant, name, string(typ), currency))
		if err == nil {
			created = true
			return nil
		}
		if !errors.Is(err, pgx.ErrNoRows) {
			return err
		}
		acc, err = scanAccount(tx.QueryRow(ctx, `SELECT `+accountCols+` FROM ledger.accounts a WHERE a.name = $1`, name))
		return err
	})
	if err != nil {
		return Account{}, false, storeErr("ledger.ensure_account", err)
	}
	if acc.Type != typ || acc.Currency != currency {
		return Account{}, false, errorf(ReasonAccountConflict, "account %s exists as %s %s, not %s %s", name, acc.Type, acc.Currency, typ, currency)
	}
	return acc, created, nil
}

// GetAccount finds an account by id or name.
//
// Errors: ErrMissingTenant, ErrInvalidArgument, ErrAccountNotFound.
func (s *Store) GetAccount(ctx context.Context, tenant string, ref AccountRef) (Account, error) {
	ref, err := ref.normalize()
	if err != nil {
		return Account{}, err
	}
	if err := validateTenant(tenant); err != nil {
		return Account{}, err
	}
	var acc Account
	err = s.inTx(ctx, tenant, nil, func(tx querier) error {
		var err error
		acc, err = getAccount(ctx, tx, ref)
		return err
	})
	return acc, storeErr("ledger.get_account", err)
}

func getAccount(ctx context.Context, tx querier, ref AccountRef) (Account, error) {
	var row pgx.Row
	if ref.ID != "" {
		row = tx.QueryRow(ctx, `SELECT `+accountCols+` FROM ledger.accounts a WHERE a.id = $1::uuid`, ref.ID)
	} else {
		row = tx.QueryRow(ctx, `SELECT `+accountCols+` FROM ledger.accounts a WHERE a.name = $1`, ref.Name)
	}
	acc, err := scanAccount(row)
	if errors.Is(err, pgx.ErrNoRows) {
		return Account{}, errorf(ReasonAccountNotFound, "account %s not found", ref)
	}
	return acc, err
}

func pageSize(n int32) int {
	switch {
	case n <= 0:
		return 100
	case n > 1000:
		return 1000
	}
	return int(n)
}

// ListAccounts lists accounts by name, optionally filtered by a name prefix.
//
// Errors: ErrMissingTenant, ErrInvalidArgument (bad prefix or page token).
func (s *Store) ListAccounts(ctx context.Context, tenant, prefix string, size int32, token string) ([]Account, string, error) {
	if err := validateTenant(tenant); err != nil {
		return nil, "", err
	}
	if prefix != "" {
		if err := field.Reference("name_prefix", prefix, maxAccountBytes); err != nil {
			return nil, "", fieldErr(err)
		}
	}
	after := ""
	if token != "" {
		b, err := base64.RawURLEncoding.DecodeString(token)
		// The token is the last name of the previous page: a reference like any account name.
		if len(token) > maxTokenBytes || err != nil || field.Reference("page_token", string(b), maxAccountBytes) != nil {
			return nil, "", errorf(ReasonInvalidArgument, "bad page_token")
		}
		after = string(b)
	}
	n := pageSize(size)
	var out []Account
	err := s.inTx(ctx, tenant, nil, func(tx querier) error {
		rows, err := tx.Query(ctx, `SELECT `+accountCols+` FROM ledger.accounts a
			WHERE a.name > $1 AND starts_with(a.name, $2) ORDER BY a.name LIMIT $3`, after, prefix, n+1)
		if err != nil {
			return err
		}
		out, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (Account, error) { return scanAccount(r) })
		return err
	})
	if err != nil {
		return nil, "", storeErr("ledger.list_accounts", err)
	}
	next := ""
	if len(out) > n {
		out = out[:n]
		next = base64.RawURLEncoding.EncodeToString([]byte(out[n-1].Name))
	}
	return out, next, nil
}

// accountCache remembers accounts by tenant and by name or id. Accounts are never updated or
// deleted (the database refuses both), so a remembered account cannot go stale; this saves the
// look-up round trip of every posting. It is bounded by forgetting everything when full.
type accountCache struct {
	mu     sync.RWMutex
	byName map[[2]string]Account
	byID   map[[2]string]Account
	max    int
}

func newAccountCache(max int) *accountCache {
	return &accountCache{byName: map[[2]string]Account{}, byID: map[[2]string]Account{}, max: max}
}

func (c *accountCache) put(accs ...Account) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.byID)+len(accs) > c.max {
		c.byName, c.byID = map[[2]string]Account{}, map[[2]string]Account{}
	}
	for _, a := range accs {
		c.byName[[2]string{a.TenantID, a.Name}] = a
		c.byID[[2]string{a.TenantID, a.ID}] = a
	}
}

// forget drops everything (after the database refused an account the cache vouched for, as
// after a restore from an older backup).
func (c *accountCache) forget() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.byName, c.byID = map[[2]string]Account{}, map[[2]string]Account{}
}

// resolve returns the tenant's accounts among names and ids (ids in canonical form), reading
// the ones it does not know in one round trip.
func (c *accountCache) resolve(ctx context.Context, s *Store, tenant string, names, ids []string) (map[string]Account, map[string]Account, error) {
	byName := make(map[string]Account, len(names))
	byID := make(map[string]Account, len(ids))
	var missNames, missIDs []string
	c.mu.RLock()
	for _, n := range names {
		if a, ok := c.byName[[2]string{tenant, n}]; ok {
			byName[n], byID[a.ID] = a, a
		} else {
			missNames = append(missNames, n)
		}
	}
	for _, id := range ids {
		if u, err := uuid.Parse(id); err == nil {
			id = u.String()
		}
		if a, ok := c.byID[[2]string{tenant, id}]; ok {
			byName[a.Name], byID[id] = a, a
		} else {
			missIDs = append(missIDs, id)
		}
	}
	c.mu.RUnlock()
	if len(missNames)+len(missIDs) == 0 {
		return byName, byID, nil
	}
	var found []Account
	err := s.inTx(ctx, tenant, func(b *pgx.Batch) {
		// Joins against the lists (rather than = ANY) keep index look-ups in the generic plan a
		// prepared statement ends up with.
		b.Queue(`SELECT `+accountCols+` FROM unnest($1::text[]) AS n(name) JOIN ledger.accounts a ON a.name = n.name
			UNION
			SELECT `+accountCols+` FROM unnest($2::uuid[]) AS i(id) JOIN ledger.accounts a ON a.id = i.id`,
			missNames, missIDs).Query(func(rows pgx.Rows) error {
			var err error
			found, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (Account, error) { return scanAccount(r) })
			return err
		})
	}, nil)
	if err != nil {
		return nil, nil, err
	}
	for _, a := range found {
		byName[a.Name], byID[a.ID] = a, a
	}
	c.put(found...)
	return byName, byID, nil
}
