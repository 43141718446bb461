package sandbox

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"time"
)

// Handler is the bank's HTTP surface: the contract's bank endpoints under /api/v1 and the
// operator/test endpoints under /api/v1/sandbox.
func (b *Bank) Handler() http.Handler {
	mux := http.NewServeMux()
	for _, rt := range b.routes() {
		mux.HandleFunc(rt.pattern, rt.handler)
	}
	return mux
}

type route struct {
	pattern string
	handler http.HandlerFunc
}

// routes is the whole surface in one table (the contract's order, then the sandbox additions).
func (b *Bank) routes() []route {
	return []route{
		{"GET /api/v1/accounts/{account}", b.getAccount},
		{"POST /api/v1/transfers", b.createTransfer},
		{"GET /api/v1/transfers/{id}", b.getTransfer},
		{"GET /api/v1/transfers/by-reference/{reference...}", b.getTransferByReference},
		{"POST /api/v1/transfer-batches", b.createBatch},
		{"GET /api/v1/transfer-batches/{id}", b.getBatch},
		{"GET /api/v1/transfer-batches/by-reference/{reference...}", b.getBatchByReference},
		{"GET /api/v1/statements", b.getStatement},

		{"POST /api/v1/sandbox/accounts", b.opCreateAccount},
		{"GET /api/v1/sandbox/accounts/{account}", b.opGetAccount},
		{"POST /api/v1/sandbox/accounts/{account}/close", b.opCloseAccount},
		{"POST /api/v1/sandbox/accounts/{account}/fund", b.opFundAccount},
		{"GET /api/v1/sandbox/transfers", b.opListTransfers},
		{"GET /api/v1/sandbox/callbacks", b.opListCallbacks},
		{"GET /api/v1/sandbox/faults", b.opListFaults},
		{"PUT /api/v1/sandbox/faults", b.opPutFaults},
		{"DELETE /api/v1/sandbox/faults", b.opClearFaults},
		{"PUT /api/v1/sandbox/faults/{account}", b.opPutFaults},
		{"DELETE /api/v1/sandbox/faults/{account}", b.opClearFaults},

		{"GET /healthz", b.healthz},
		{"/", func(w http.ResponseWriter, r *http.Request) {
			b.writeError(w, r, errf(404, CodeNotFound, "no route %s %s", r.Method, r.URL.Path))
		}},
	}
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

// decode reads exactly one JSON object with no unknown fields (no mass assignment on a bank's
// money-moving routes) from a body of at most limit bytes.
func decode(r *http.Request, limit int64, v any) *Error {
	body, err := io.ReadAll(io.LimitReader(r.Body, limit+1))
	if err != nil {
		return invalid("cannot read body: %v", err)
	}
	if int64(len(body)) > limit {
		return errf(413, CodeInvalidRequest, "body larger than %d bytes", limit)
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return invalid("malformed JSON: %v", err)
	}
	if dec.More() {
		return invalid("malformed JSON: trailing data after the object")
	}
	return nil
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
	if f.LatencyMs > 0 && !sleep(r.Context(), time.Duration(f.LatencyMs)*time.Millisecond) {
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
func holdResponse(ctx context.Context, f Faults) {
	if f.ExecuteThenTimeoutMs > 0 {
		sleep(ctx, time.Duration(f.ExecuteThenTimeoutMs)*time.Millisecond)
	}
}

// sleep waits d or until ctx ends; it reports whether the full wait happened.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

var uuidRe = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

// --- bank endpoints ---

func (b *Bank) getAccount(w http.ResponseWriter, r *http.Request) {
	number := r.PathValue("account")
	if _, ok := b.injected(w, r, number); !ok {
		return
	}
	a, err := b.store.getAccount(r.Context(), number)
	if err != nil {
		b.writeError(w, r, err)
		return
	}
	writeJSON(w, 200, a.Account)
}

func (b *Bank) createTransfer(w http.ResponseWriter, r *http.Request) {
	var req TransferRequest
	if e := decode(r, 64<<10, &req); e != nil {
		b.writeError(w, r, e)
		return
	}
	if e := req.Validate(); e != nil {
		b.writeError(w, r, e)
		return
	}
	f, ok := b.injected(w, r, req.FromAccount, req.ToAccount)
	if !ok {
		return
	}
	if f.RejectCode != "" {
		b.writeError(w, r, errf(422, f.RejectCode, "injected rejection of transfer %s", req.Reference))
		return
	}
	t, created, err := b.store.createTransfer(r.Context(), req, f.SettleFailureCode, b.cfg.SettleDelay)
	if err != nil {
		b.writeError(w, r, err)
		return
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
		b.scheduleSettlement()
	}
	holdResponse(r.Context(), f)
	writeJSON(w, status, t)
}

func (b *Bank) renderTransfer(w http.ResponseWriter, r *http.Request, t Transfer, err error) {
	if err != nil {
		b.writeError(w, r, err)
		return
	}
	if _, ok := b.injected(w, r, t.FromAccount, t.ToAccount); !ok {
		return
	}
	writeJSON(w, 200, t)
}

func (b *Bank) getTransfer(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if !uuidRe.MatchString(id) {
		b.writeError(w, r, errf(404, CodeTransferNotFound, "no transfer with id %s", id))
		return
	}
	t, err := b.store.getTransfer(r.Context(), nil, "id", id)
	b.renderTransfer(w, r, t, err)
}

func (b *Bank) getTransferByReference(w http.ResponseWriter, r *http.Request) {
	t, err := b.store.getTransfer(r.Context(), nil, "reference", r.PathValue("reference"))
	b.renderTransfer(w, r, t, err)
}

func (b *Bank) createBatch(w http.ResponseWriter, r *http.Request) {
	var req BatchRequest
	if e := decode(r, 16<<20, &req); e != nil {
		b.writeError(w, r, e)
		return
	}
	if e := req.Validate(); e != nil {
		b.writeError(w, r, e)
		return
	}
	f, ok := b.injected(w, r, req.FromAccount)
	if !ok {
		return
	}
	if f.RejectCode != "" {
		b.writeError(w, r, errf(422, f.RejectCode, "injected rejection of batch %s", req.BatchReference))
		return
	}
	fs, err := b.faults.snapshot(r.Context())
	if err != nil {
		b.writeError(w, r, err)
		return
	}
	batch, created, err := b.store.createBatch(r.Context(), req, fs, b.cfg.SettleDelay)
	if err != nil {
		b.writeError(w, r, err)
		return
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
		b.scheduleSettlement()
		wake(b.deliverer.nudge) // items failed at acceptance have their callbacks already
	}
	holdResponse(r.Context(), f)
	writeJSON(w, status, batch)
}

func (b *Bank) renderBatch(w http.ResponseWriter, r *http.Request, id string) {
	batch, err := b.store.getBatch(r.Context(), id)
	if err != nil {
		b.writeError(w, r, err)
		return
	}
	if _, ok := b.injected(w, r, batch.FromAccount); !ok {
		return
	}
	writeJSON(w, 200, batch)
}

func (b *Bank) getBatch(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if !uuidRe.MatchString(id) {
		b.writeError(w, r, errf(404, CodeBatchNotFound, "no batch with id %s", id))
		return
	}
	b.renderBatch(w, r, id)
}

func (b *Bank) getBatchByReference(w http.ResponseWriter, r *http.Request) {
	ref := r.PathValue("reference")
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
	today := utcDate(time.Now())
	from, to := time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC), today
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
	if to.Before(from) {
		b.writeError(w, r, invalid("from must not be after to"))
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
	if e := decode(r, 64<<10, &req); e != nil {
		b.writeError(w, r, e)
		return
	}
	if e := req.Validate(); e != nil {
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

func (b *Bank) opGetAccount(w http.ResponseWriter, r *http.Request) {
	a, err := b.store.getAccount(r.Context(), r.PathValue("account"))
	if err != nil {
		b.writeError(w, r, err)
		return
	}
	writeJSON(w, 200, a)
}

func (b *Bank) opCloseAccount(w http.ResponseWriter, r *http.Request) {
	a, err := b.store.closeAccount(r.Context(), r.PathValue("account"))
	if err != nil {
		b.writeError(w, r, err)
		return
	}
	writeJSON(w, 200, a)
}

func (b *Bank) opFundAccount(w http.ResponseWriter, r *http.Request) {
	var req FundRequest
	if e := decode(r, 64<<10, &req); e != nil {
		b.writeError(w, r, e)
		return
	}
	if e := validAmount("amountSantim", req.AmountSantim); e != nil {
		b.writeError(w, r, e)
		return
	}
	if req.Reference != "" {
		if e := validReference("reference", req.Reference); e != nil {
			b.writeError(w, r, e)
			return
		}
	}
	a, err := b.store.fundAccount(r.Context(), r.PathValue("account"), req)
	if err != nil {
		b.writeError(w, r, err)
		return
	}
	writeJSON(w, 200, a)
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
	if err != nil {
		b.writeError(w, r, err)
		return
	}
	if ts == nil {
		ts = []Transfer{}
	}
	writeJSON(w, 200, map[string]any{"transfers": ts})
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
	if err != nil {
		b.writeError(w, r, err)
		return
	}
	if cs == nil {
		cs = []CallbackRecord{}
	}
	writeJSON(w, 200, map[string]any{"callbacks": cs})
}

// faultScope is the scope a faults route addresses: the account in the path, or global.
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
	if e := decode(r, 64<<10, &f); e != nil {
		b.writeError(w, r, e)
		return
	}
	if e := f.Validate(); e != nil {
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
	var err error
	if scope == GlobalScope && r.URL.Query().Get("all") == "true" {
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
