package sandbox

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/wagerail/wagerail/internal/platform/field"
)

// Handler is the bank's HTTP surface: the contract's bank endpoints under /api/v1 and the
// operator/test endpoints under /api/v1/sandbox. Every route reads at most its body bound.
func (b *Bank) Handler() http.Handler {
	mux := http.NewServeMux()
	for _, rt := range b.routes() {
		mux.Handle(rt.pattern, b.edge(rt.maxBody, rt.handler))
	}
	return mux
}

type route struct {
	pattern string
	maxBody int64
	handler http.HandlerFunc
}

// Body bounds: a batch of MaxBatchItems items is a few MB of JSON; every other body is a small
// object.
const (
	smallBody = 64 << 10
	batchBody = 16 << 20
)

// routes is the whole surface in one table (the contract's order, then the sandbox additions).
// The national ID registry (identity.go) is another party than the bank; it shares the bank's
// edge (body bounds, error envelope, fault injection) and its process.
func (b *Bank) routes() []route {
	return []route{
		{"GET /api/v1/accounts/{account}", smallBody, b.getAccount},
		{"POST /api/v1/transfers", smallBody, b.createTransfer},
		{"GET /api/v1/transfers/{id}", smallBody, b.getTransfer},
		{"GET /api/v1/transfers/by-reference/{reference...}", smallBody, b.getTransferByReference},
		{"POST /api/v1/transfer-batches", batchBody, b.createBatch},
		{"GET /api/v1/transfer-batches/{id}", smallBody, b.getBatch},
		{"GET /api/v1/transfer-batches/by-reference/{reference...}", smallBody, b.getBatchByReference},
		{"GET /api/v1/statements", smallBody, b.getStatement},
		{"GET /api/v1/identities/{nationalId}", smallBody, b.getIdentity},

		{"POST /api/v1/sandbox/accounts", smallBody, b.opCreateAccount},
		{"GET /api/v1/sandbox/accounts/{account}", smallBody, b.opGetAccount},
		{"POST /api/v1/sandbox/accounts/{account}/close", smallBody, b.opCloseAccount},
		{"POST /api/v1/sandbox/accounts/{account}/fund", smallBody, b.opFundAccount},
		{"GET /api/v1/sandbox/transfers", smallBody, b.opListTransfers},
		{"GET /api/v1/sandbox/callbacks", smallBody, b.opListCallbacks},
		{"GET /api/v1/sandbox/faults", smallBody, b.opListFaults},
		{"PUT /api/v1/sandbox/faults", smallBody, b.opPutFaults},
		{"DELETE /api/v1/sandbox/faults", smallBody, b.opClearFaults},
		{"PUT /api/v1/sandbox/faults/{account}", smallBody, b.opPutFaults},
		{"DELETE /api/v1/sandbox/faults/{account}", smallBody, b.opClearFaults},
		{"POST /api/v1/sandbox/identities", smallBody, b.opCreateIdentity},
		{"POST /api/v1/sandbox/identities/{nationalId}/revoke", smallBody, b.opRevokeIdentity},

		{"GET /healthz", smallBody, b.healthz},
		{"/", smallBody, func(w http.ResponseWriter, r *http.Request) {
			// The path is not echoed: it is the caller's, unvalidated.
			b.writeError(w, r, errf(404, CodeNotFound, "no route for this method and path"))
		}},
	}
}

// edge bounds the request body of every route (a declared length over the bound is refused
// before a byte is read, an undeclared one when the reader crosses it) and turns a handler panic
// into a logged 500 rather than a dropped connection.
func (b *Bank) edge(maxBody int64, h http.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if p := recover(); p != nil {
				if p == http.ErrAbortHandler {
					panic(p)
				}
				b.writeError(w, r, fmt.Errorf("sandbox: panic: %v", p))
			}
		}()
		if r.ContentLength > maxBody {
			b.writeError(w, r, tooLarge(maxBody))
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, maxBody)
		h(w, r)
	})
}

func tooLarge(limit int64) *Error {
	return errf(http.StatusRequestEntityTooLarge, CodeBodyTooLarge, "body larger than %d bytes", limit)
}

// --- rendering ---

type errorBody struct {
	Error struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	buf, err := json.Marshal(v)
	if err != nil {
		http.Error(w, `{"error":{"code":"INTERNAL","message":"cannot render response"}}`, 500)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(buf, '\n'))
}

// writeError is the one place errors become HTTP: business outcomes keep their status and code;
// anything else is logged and answered 500 INTERNAL without details.
func (b *Bank) writeError(w http.ResponseWriter, r *http.Request, err error) {
	var body errorBody
	status := http.StatusInternalServerError
	if e, ok := AsError(err); ok {
		status, body.Error.Code, body.Error.Message = e.Status, e.Code, e.Message
	} else {
		if r.Context().Err() == nil {
			b.log.Error("sandbox: request failed", "method", r.Method, "path", r.URL.Path, "err", err)
		}
		body.Error.Code, body.Error.Message = CodeInternal, "internal error"
	}
	writeJSON(w, status, body)
}

// render answers 200 with v, or err through writeError when the call that made v failed.
func (b *Bank) render(w http.ResponseWriter, r *http.Request, v any, err error) {
	if err != nil {
		b.writeError(w, r, err)
		return
	}
	writeJSON(w, 200, v)
}

// renderList answers 200 with the object {name: items}; no items is an empty list, never null.
func renderList[T any](b *Bank, w http.ResponseWriter, r *http.Request, name string, items []T, err error) {
	if items == nil {
		items = []T{}
	}
	b.render(w, r, map[string]any{name: items}, err)
}

// createdStatus is the answer to an idempotent create: 201 when it made something, 200 when it
// replayed what the bank already holds under the same key.
func createdStatus(created bool) int {
	if created {
		return http.StatusCreated
	}
	return http.StatusOK
}

// decode reads exactly one JSON object with no unknown fields (no mass assignment on a bank's
// money-moving routes) from a body the edge has bounded. The raw body must be valid UTF-8: the
// decoder would silently turn an invalid sequence into U+FFFD, so the bank would store (and
// sign callbacks over) a value the caller never sent.
func decode(r *http.Request, v any) *Error {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		var big *http.MaxBytesError
		if errors.As(err, &big) {
			return tooLarge(big.Limit)
		}
		return invalid("cannot read the body")
	}
	if !utf8.Valid(body) {
		return invalid("body must be valid UTF-8")
	}
	if rest := bytes.TrimLeft(body, jsonSpace); len(rest) == 0 || rest[0] != '{' {
		return invalid("body must be a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return jsonRefusal(err)
	}
	if len(bytes.TrimLeft(body[dec.InputOffset():], jsonSpace)) > 0 {
		return invalid("malformed JSON: data after the object")
	}
	return nil
}

const jsonSpace = " \t\r\n"

// requestBody is a body a route binds: decoded, then validated as a whole.
type requestBody interface{ Validate() *Error }

// bind decodes the body into req and validates it: the first refusal (413 or 400) is the answer,
// before anything is looked up or written.
func bind(r *http.Request, req requestBody) *Error {
	if e := decode(r, req); e != nil {
		return e
	}
	return req.Validate()
}

// movingRequest is the body of a money-moving create: a transfer or a batch.
type movingRequest interface {
	requestBody
	// callback is the callbackUrl the request names, "" for the bank's default.
	callback() string
}

func (r *TransferRequest) callback() string { return r.CallbackURL }
func (r *BatchRequest) callback() string    { return r.CallbackURL }

// bindMoving is bind for a money-moving create, which must also name only a callbackUrl the bank
// was started to call. The allowlist is checked here, where such a body is read, rather than by
// each route: the bank posts signed money events, and a route that forgot the check would let any
// caller aim the bank at an internal address.
func (b *Bank) bindMoving(r *http.Request, req movingRequest) *Error {
	if e := bind(r, req); e != nil {
		return e
	}
	if u := req.callback(); u != "" && !b.allowCallback(u) {
		return errf(400, CodeCallbackURLNotAllowed, "callbackUrl is not on the bank's callback allowlist")
	}
	return nil
}

// jsonRefusal says what is wrong with a body in the contract's words: field names and JSON
// kinds, never the decoder's Go types ("cannot unmarshal string into Go struct field …").
func jsonRefusal(err error) *Error {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF):
		return invalid("malformed JSON: the body ends inside the object")
	case errors.As(err, &syn):
		return invalid("malformed JSON at byte %d", syn.Offset)
	case errors.As(err, &typ):
		name := typ.Field
		if name == "" {
			name = "body"
		}
		switch typ.Type.Kind() {
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
			reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
			if strings.HasPrefix(typ.Value, "number") {
				return invalid("%s must be an integer within range", name)
			}
			return invalid("%s must be an integer", name)
		case reflect.String:
			return invalid("%s must be a string", name)
		case reflect.Bool:
			return invalid("%s must be true or false", name)
		case reflect.Slice, reflect.Array:
			return invalid("%s must be an array", name)
		default:
			return invalid("%s must be an object", name)
		}
	}
	// The decoder has no type for an unknown field; its message quotes the caller's key, which
	// is echoed only when it is a plain identifier.
	if key, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		if k, uerr := strconv.Unquote(key); uerr == nil && field.Identifier("field", k, 64) == nil {
			return invalid("unknown field %s", k)
		}
		return invalid("the body has an unknown field")
	}
	return invalid("malformed JSON")
}

// --- faults at the edge ---

// injected applies the latency and error-rate faults of the global scope and the given accounts.
// It returns the merged faults and false when it has already answered (injected 503).
func (b *Bank) injected(w http.ResponseWriter, r *http.Request, accounts ...string) (Faults, bool) {
	fs, err := b.faults.snapshot(r.Context())
	if err != nil {
		b.writeError(w, r, err)
		return Faults{}, false
	}
	f := fs.For(accounts...)
	if f.LatencyMs > 0 && !b.wait(w, r, time.Duration(f.LatencyMs)*time.Millisecond) {
		return f, false
	}
	if f.ErrorRatePercent > 0 && randPercent() < f.ErrorRatePercent {
		w.Header().Set("Retry-After", "1")
		b.writeError(w, r, errf(503, CodeInjectedFailure, "injected failure: the bank is unavailable"))
		return f, false
	}
	return f, true
}

// holdResponse implements execute-then-timeout: the work is committed, the answer waits.
func (b *Bank) holdResponse(w http.ResponseWriter, r *http.Request, f Faults) {
	if f.ExecuteThenTimeoutMs > 0 {
		b.wait(w, r, time.Duration(f.ExecuteThenTimeoutMs)*time.Millisecond)
	}
}

// wait is an injected delay. The server's WriteTimeout is meant for the bank's own work, so the
// response's write deadline moves out by exactly the injected wait: the fault delays the answer
// as configured instead of turning into a connection the server cuts.
func (b *Bank) wait(w http.ResponseWriter, r *http.Request, d time.Duration) bool {
	// Not every ResponseWriter supports deadlines (a recorder does not); there is then no
	// deadline to move.
	_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(d + b.cfg.WriteTimeout))
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-r.Context().Done():
		return false
	}
}

var uuidRe = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

// --- bank endpoints ---

// pathAccount is the account named in the path, or a 400 before anything is looked up.
func pathAccount(r *http.Request) (string, *Error) {
	number := r.PathValue("account")
	return number, validAccount("account", number)
}

// pathID is the bank id (a UUID) named in the path, or a 400.
func pathID(r *http.Request) (string, *Error) {
	id := r.PathValue("id")
	if !uuidRe.MatchString(id) {
		return "", invalid("id must be a UUID")
	}
	return id, nil
}

func (b *Bank) getAccount(w http.ResponseWriter, r *http.Request) {
	number, e := pathAccount(r)
	if e != nil {
		b.writeError(w, r, e)
		return
	}
	if _, ok := b.injected(w, r, number); !ok {
		return
	}
	a, err := b.store.getAccount(r.Context(), number)
	b.render(w, r, a.Account, err)
}

func (b *Bank) createTransfer(w http.ResponseWriter, r *http.Request) {
	var req TransferRequest
	if e := b.bindMoving(r, &req); e != nil {
		b.writeError(w, r, e)
		return
	}
	f, ok := b.injected(w, r, req.FromAccount, req.ToAccount)
	if !ok {
		return
	}
	// An injected rejection applies to a new transfer only: the store answers a replay of one it
	// already holds first, as a real bank would.
	t, created, err := b.store.createTransfer(r.Context(), req, f.RejectCode, f.SettleFailureCode, b.cfg.SettleDelay)
	if err != nil {
		b.writeError(w, r, err)
		return
	}
	if created {
		b.scheduleSettlement()
	}
	b.holdResponse(w, r, f)
	writeJSON(w, createdStatus(created), t)
}

// renderRead answers a partner's read of an object whose accounts are known only once it is
// read (a transfer, a batch): err; else the injected faults of those accounts; else 200 with v.
// Nothing found is answered before any fault, as no account is known.
func (b *Bank) renderRead(w http.ResponseWriter, r *http.Request, v any, err error, accounts ...string) {
	if err != nil {
		b.writeError(w, r, err)
		return
	}
	if _, ok := b.injected(w, r, accounts...); !ok {
		return
	}
	writeJSON(w, 200, v)
}

func (b *Bank) renderTransfer(w http.ResponseWriter, r *http.Request, t Transfer, err error) {
	b.renderRead(w, r, t, err, t.FromAccount, t.ToAccount)
}

func (b *Bank) getTransfer(w http.ResponseWriter, r *http.Request) {
	id, e := pathID(r)
	if e != nil {
		b.writeError(w, r, e)
		return
	}
	t, err := b.store.getTransfer(r.Context(), nil, "id", id)
	b.renderTransfer(w, r, t, err)
}

func (b *Bank) getTransferByReference(w http.ResponseWriter, r *http.Request) {
	ref := r.PathValue("reference")
	if e := validReference("reference", ref); e != nil {
		b.writeError(w, r, e)
		return
	}
	t, err := b.store.getTransfer(r.Context(), nil, "reference", ref)
	b.renderTransfer(w, r, t, err)
}

func (b *Bank) createBatch(w http.ResponseWriter, r *http.Request) {
	var req BatchRequest
	if e := b.bindMoving(r, &req); e != nil {
		b.writeError(w, r, e)
		return
	}
	f, ok := b.injected(w, r, req.FromAccount)
	if !ok {
		return
	}
	fs, err := b.faults.snapshot(r.Context())
	if err != nil {
		b.writeError(w, r, err)
		return
	}
	// As for a transfer, an injected rejection refuses a new batch only, never a replay.
	batch, created, err := b.store.createBatch(r.Context(), req, f.RejectCode, fs, b.cfg.SettleDelay)
	if err != nil {
		b.writeError(w, r, err)
		return
	}
	if created {
		b.scheduleSettlement()
		wake(b.deliverer.nudge) // items failed at acceptance have their callbacks already
	}
	b.holdResponse(w, r, f)
	writeJSON(w, createdStatus(created), batch)
}

func (b *Bank) renderBatch(w http.ResponseWriter, r *http.Request, id string) {
	batch, err := b.store.getBatch(r.Context(), id)
	b.renderRead(w, r, batch, err, batch.FromAccount)
}

func (b *Bank) getBatch(w http.ResponseWriter, r *http.Request) {
	id, e := pathID(r)
	if e != nil {
		b.writeError(w, r, e)
		return
	}
	b.renderBatch(w, r, id)
}

func (b *Bank) getBatchByReference(w http.ResponseWriter, r *http.Request) {
	ref := r.PathValue("reference")
	if e := validReference("batchReference", ref); e != nil {
		b.writeError(w, r, e)
		return
	}
	id, err := b.store.batchIDByReference(r.Context(), ref)
	if err != nil {
		b.writeError(w, r, err)
		return
	}
	b.renderBatch(w, r, id)
}

func (b *Bank) getStatement(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	account := q.Get("account")
	if e := validAccount("account", account); e != nil {
		b.writeError(w, r, e)
		return
	}
	epoch := time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC)
	// to defaults to today, from to the longest period before to.
	to, from := utcDate(time.Now()), time.Time{}
	for _, p := range []struct {
		name string
		dst  *time.Time
	}{{"from", &from}, {"to", &to}} {
		if v := q.Get(p.name); v != "" {
			d, err := time.Parse(dateLayout, v)
			if err != nil {
				b.writeError(w, r, invalid("%s must be a date YYYY-MM-DD", p.name))
				return
			}
			*p.dst = d
		}
	}
	if q.Get("from") == "" {
		from = to.AddDate(0, 0, -MaxStatementDays)
	}
	// No booking is older than the epoch; a day before it (year 0 included, which Postgres
	// cannot hold) asks for the same lines.
	if from.Before(epoch) {
		from = epoch
	}
	if to.Before(from) {
		b.writeError(w, r, invalid("from must not be after to"))
		return
	}
	// One statement covers a bounded period (as the gateway asks for), so one request cannot
	// make the bank read and render an account's whole history.
	if to.Sub(from) > MaxStatementDays*24*time.Hour {
		b.writeError(w, r, invalid("to must be at most %d days after from", MaxStatementDays))
		return
	}
	format := q.Get("format")
	switch format {
	case "":
		format = "csv"
	case "csv", "camt053":
	default:
		b.writeError(w, r, invalid("format must be csv or camt053"))
		return
	}
	if _, ok := b.injected(w, r, account); !ok {
		return
	}
	st, err := b.store.statement(r.Context(), account, from, to)
	if err != nil {
		b.writeError(w, r, err)
		return
	}
	var buf bytes.Buffer
	name := "statement-" + account + "-" + from.Format("20060102") + "-" + to.Format("20060102")
	if format == "csv" {
		err = st.WriteCSV(&buf)
		w.Header().Set("Content-Type", "text/csv; charset=utf-8")
		name += ".csv"
	} else {
		err = st.WriteCamt053(&buf)
		w.Header().Set("Content-Type", "application/xml; charset=utf-8")
		name += ".xml"
	}
	if err != nil {
		b.writeError(w, r, err)
		return
	}
	w.Header().Set("Content-Disposition", `attachment; filename="`+name+`"`)
	w.WriteHeader(200)
	_, _ = w.Write(buf.Bytes())
}

// --- operator endpoints ---

func (b *Bank) opCreateAccount(w http.ResponseWriter, r *http.Request) {
	var req CreateAccountRequest
	if e := bind(r, &req); e != nil {
		b.writeError(w, r, e)
		return
	}
	a, created, err := b.store.createAccount(r.Context(), req)
	if err != nil {
		b.writeError(w, r, err)
		return
	}
	if !created {
		b.writeError(w, r, errf(409, CodeAccountExists, "account %s already exists", req.AccountNumber))
		return
	}
	writeJSON(w, 201, a)
}

// actOnPath answers an operator route that acts on the one thing its path names (an account, an
// identity): key's 400 for a malformed name before anything is looked up, else what act returns
// (200) or its error. Operator routes take no injected faults.
func actOnPath[T any](b *Bank, w http.ResponseWriter, r *http.Request,
	key func(*http.Request) (string, *Error), act func(context.Context, string) (T, error)) {
	k, e := key(r)
	if e != nil {
		b.writeError(w, r, e)
		return
	}
	v, err := act(r.Context(), k)
	b.render(w, r, v, err)
}

func (b *Bank) opGetAccount(w http.ResponseWriter, r *http.Request) {
	actOnPath(b, w, r, pathAccount, b.store.getAccount)
}

func (b *Bank) opCloseAccount(w http.ResponseWriter, r *http.Request) {
	actOnPath(b, w, r, pathAccount, b.store.closeAccount)
}

// opFundAccount credits an account from outside the bank. Errors: 404 ACCOUNT_NOT_FOUND; 422
// ACCOUNT_CLOSED (a closed account takes no money, as in transfers: a business refusal of a
// well-formed request, hence 422 like every other ACCOUNT_CLOSED); 422 BALANCE_LIMIT_EXCEEDED.
func (b *Bank) opFundAccount(w http.ResponseWriter, r *http.Request) {
	number, e := pathAccount(r)
	if e != nil {
		b.writeError(w, r, e)
		return
	}
	var req FundRequest
	if e := bind(r, &req); e != nil {
		b.writeError(w, r, e)
		return
	}
	a, err := b.store.fundAccount(r.Context(), number, req)
	b.render(w, r, a, err)
}

func limitParam(r *http.Request, def, hi int) (int, *Error) {
	v := r.URL.Query().Get("limit")
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 || n > hi {
		return 0, invalid("limit must be between 1 and %d", hi)
	}
	return n, nil
}

func (b *Bank) opListTransfers(w http.ResponseWriter, r *http.Request) {
	status := r.URL.Query().Get("status")
	switch status {
	case "", StatusPending, StatusSettled, StatusFailed:
	default:
		b.writeError(w, r, invalid("status must be PENDING, SETTLED or FAILED"))
		return
	}
	limit, e := limitParam(r, 100, 10_000)
	if e != nil {
		b.writeError(w, r, e)
		return
	}
	ts, err := b.store.listTransfers(r.Context(), status, limit)
	renderList(b, w, r, "transfers", ts, err)
}

func (b *Bank) opListCallbacks(w http.ResponseWriter, r *http.Request) {
	tid := r.URL.Query().Get("transferId")
	if tid != "" && !uuidRe.MatchString(tid) {
		b.writeError(w, r, invalid("transferId must be a transfer id"))
		return
	}
	limit, e := limitParam(r, 100, 10_000)
	if e != nil {
		b.writeError(w, r, e)
		return
	}
	cs, err := b.store.listCallbacks(r.Context(), tid, limit)
	renderList(b, w, r, "callbacks", cs, err)
}

// faultScope is the scope a faults route addresses: the account in the path (or a national id,
// or RegistryScope: they have an account number's shape), or global.
func faultScope(r *http.Request) (string, *Error) {
	acct := r.PathValue("account")
	if acct == "" {
		return GlobalScope, nil
	}
	if e := validAccount("account", acct); e != nil {
		return "", e
	}
	return acct, nil
}

func (b *Bank) opPutFaults(w http.ResponseWriter, r *http.Request) {
	scope, e := faultScope(r)
	if e != nil {
		b.writeError(w, r, e)
		return
	}
	var f Faults
	if e := bind(r, &f); e != nil {
		b.writeError(w, r, e)
		return
	}
	if err := b.faults.put(r.Context(), scope, f); err != nil {
		b.writeError(w, r, err)
		return
	}
	b.log.Info("sandbox: faults set", "scope", scope, "faults", f)
	writeJSON(w, 200, map[string]any{"scope": scope, "faults": f})
}

func (b *Bank) opClearFaults(w http.ResponseWriter, r *http.Request) {
	scope, e := faultScope(r)
	if e != nil {
		b.writeError(w, r, e)
		return
	}
	all := r.URL.Query().Get("all")
	if all != "" && all != "true" && all != "false" {
		b.writeError(w, r, invalid("all must be true or false"))
		return
	}
	var err error
	if scope == GlobalScope && all == "true" {
		err = b.faults.clearAll(r.Context())
	} else {
		err = b.faults.clear(r.Context(), scope)
	}
	if err != nil {
		b.writeError(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// FaultList is the body of GET /api/v1/sandbox/faults.
type FaultList struct {
	Global   *Faults           `json:"global"`
	Accounts map[string]Faults `json:"accounts"`
}

func (b *Bank) opListFaults(w http.ResponseWriter, r *http.Request) {
	b.faults.invalidate() // an operator wants the stored truth, not this process's cache
	fs, err := b.faults.snapshot(r.Context())
	if err != nil {
		b.writeError(w, r, err)
		return
	}
	out := FaultList{Accounts: map[string]Faults{}}
	for scope, f := range fs {
		if scope == GlobalScope {
			out.Global = f
		} else {
			out.Accounts[scope] = *f
		}
	}
	writeJSON(w, 200, out)
}

func (b *Bank) healthz(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	if err := b.store.pool.Ping(ctx); err != nil {
		writeJSON(w, 503, map[string]string{"status": "unavailable", "database": "down"})
		return
	}
	writeJSON(w, 200, map[string]string{"status": "ok"})
}
