package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// SandboxPartner is the partner name of the bank sandbox.
const SandboxPartner = "sandbox"

// SandboxAdapter speaks the bank sandbox's HTTP API (notes: sandbox contract). It holds no
// deadline or retry policy of its own: Guard adds those.
type SandboxAdapter struct {
	base   *url.URL
	client *http.Client
}

// NewSandboxAdapter returns an adapter for the sandbox at baseURL (e.g. http://127.0.0.1:8090).
// client may be nil for a pooled default suited to many concurrent calls to one host.
//
// The adapter follows no redirect (a given client is copied, not changed): a 3xx is an answer
// the contract does not describe, so its outcome is unknown. Following it would re-send a
// transfer to whatever host a 307/308 names, or turn it into a GET (302) whose 2xx would read as
// the bank's answer.
func NewSandboxAdapter(baseURL string, client *http.Client) (*SandboxAdapter, error) {
	u, err := url.Parse(strings.TrimRight(baseURL, "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("sandbox adapter: base url %q must be http(s)://host[:port]", baseURL)
	}
	var c http.Client
	if client != nil {
		c = *client
	} else {
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.MaxIdleConns = 512
		tr.MaxIdleConnsPerHost = 512
		c.Transport = tr
	}
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &SandboxAdapter{base: u, client: &c}, nil
}

// Partner implements Adapter.
func (a *SandboxAdapter) Partner() string { return SandboxPartner }

type sbAccount struct {
	AccountNumber string `json:"accountNumber"`
	HolderName    string `json:"holderName"`
	Currency      string `json:"currency"`
	Status        string `json:"status"`
}

type sbTransferRequest struct {
	Reference    string `json:"reference"`
	FromAccount  string `json:"fromAccount"`
	ToAccount    string `json:"toAccount"`
	AmountSantim int64  `json:"amountSantim"`
	Currency     string `json:"currency"`
	TenantID     string `json:"tenantId"`
	Domain       string `json:"domain"`
	CallbackURL  string `json:"callbackUrl,omitempty"`
}

type sbTransfer struct {
	ID           string     `json:"id"`
	Reference    string     `json:"reference"`
	FromAccount  string     `json:"fromAccount"`
	ToAccount    string     `json:"toAccount"`
	AmountSantim int64      `json:"amountSantim"`
	Currency     string     `json:"currency"`
	TenantID     string     `json:"tenantId"`
	Domain       string     `json:"domain"`
	Status       string     `json:"status"`
	FailureCode  string     `json:"failureCode"`
	BatchID      string     `json:"batchId"`
	CreatedAt    time.Time  `json:"createdAt"`
	SettledAt    *time.Time `json:"settledAt"`
}

type sbBatchItem struct {
	Reference    string `json:"reference"`
	ToAccount    string `json:"toAccount"`
	AmountSantim int64  `json:"amountSantim"`
}

type sbBatchRequest struct {
	BatchReference string        `json:"batchReference"`
	FromAccount    string        `json:"fromAccount"`
	Currency       string        `json:"currency"`
	TenantID       string        `json:"tenantId"`
	Domain         string        `json:"domain"`
	CallbackURL    string        `json:"callbackUrl,omitempty"`
	Items          []sbBatchItem `json:"items"`
}

type sbBatch struct {
	ID             string `json:"id"`
	BatchReference string `json:"batchReference"`
	TenantID       string `json:"tenantId"`
	Status         string `json:"status"`
	ItemCount      int64  `json:"itemCount"`
	TotalSantim    int64  `json:"totalSantim"`
	Items          []struct {
		Reference   string `json:"reference"`
		TransferID  string `json:"transferId"`
		Status      string `json:"status"`
		FailureCode string `json:"failureCode"`
	} `json:"items"`
}

type sbError struct {
	Error struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// LookupAccount implements Adapter.
func (a *SandboxAdapter) LookupAccount(ctx context.Context, account string) (Account, error) {
	const op = "sandbox.lookup_account"
	seg, perr := pathSegment(op, account)
	if perr != nil {
		return Account{}, perr
	}
	var body sbAccount
	status, perr := a.do(ctx, op, http.MethodGet, "/api/v1/accounts/"+seg, nil, &body, 1<<20)
	if perr != nil {
		return Account{}, perr
	}
	if status != http.StatusOK {
		return Account{}, &PartnerError{Op: op, Kind: KindUnknown, Status: status, Message: "unexpected status"}
	}
	return Account{Number: body.AccountNumber, HolderName: body.HolderName, Currency: body.Currency, Closed: body.Status == "CLOSED"}, nil
}

// InitiateTransfer implements Adapter.
func (a *SandboxAdapter) InitiateTransfer(ctx context.Context, req TransferRequest) (Transfer, bool, error) {
	const op = "sandbox.initiate_transfer"
	in := sbTransferRequest{
		Reference: req.Reference, FromAccount: req.FromAccount, ToAccount: req.ToAccount,
		AmountSantim: req.AmountSantim, Currency: req.Currency, TenantID: req.TenantID,
		Domain: req.Domain, CallbackURL: req.CallbackURL,
	}
	var out sbTransfer
	status, perr := a.do(ctx, op, http.MethodPost, "/api/v1/transfers", in, &out, 1<<20)
	if perr != nil {
		return Transfer{}, false, perr
	}
	if status != http.StatusCreated && status != http.StatusOK {
		return Transfer{}, false, &PartnerError{Op: op, Kind: KindUnknown, Status: status, Message: "unexpected status"}
	}
	t, err := out.toTransfer(op)
	if err != nil {
		return Transfer{}, false, err
	}
	return t, status == http.StatusOK, nil
}

// InitiateBatch implements Adapter.
func (a *SandboxAdapter) InitiateBatch(ctx context.Context, req BatchRequest) (Batch, bool, error) {
	const op = "sandbox.initiate_batch"
	in := sbBatchRequest{
		BatchReference: req.BatchReference, FromAccount: req.FromAccount, Currency: req.Currency,
		TenantID: req.TenantID, Domain: req.Domain, CallbackURL: req.CallbackURL,
		Items: make([]sbBatchItem, len(req.Items)),
	}
	for i, it := range req.Items {
		in.Items[i] = sbBatchItem{Reference: it.Reference, ToAccount: it.ToAccount, AmountSantim: it.AmountSantim}
	}
	var out sbBatch
	status, perr := a.do(ctx, op, http.MethodPost, "/api/v1/transfer-batches", in, &out, 64<<20)
	if perr != nil {
		return Batch{}, false, perr
	}
	if status != http.StatusCreated && status != http.StatusOK {
		return Batch{}, false, &PartnerError{Op: op, Kind: KindUnknown, Status: status, Message: "unexpected status"}
	}
	b, err := out.toBatch(op)
	return b, status == http.StatusOK, err
}

// BatchByReference implements Adapter.
func (a *SandboxAdapter) BatchByReference(ctx context.Context, batchReference string) (Batch, error) {
	const op = "sandbox.batch_by_reference"
	seg, perr := pathSegment(op, batchReference)
	if perr != nil {
		return Batch{}, perr
	}
	var out sbBatch
	status, perr := a.do(ctx, op, http.MethodGet, "/api/v1/transfer-batches/by-reference/"+seg, nil, &out, 64<<20)
	if perr != nil {
		return Batch{}, perr
	}
	if status != http.StatusOK {
		return Batch{}, &PartnerError{Op: op, Kind: KindUnknown, Status: status, Message: "unexpected status"}
	}
	return out.toBatch(op)
}

func (b sbBatch) toBatch(op string) (Batch, error) {
	out := Batch{ID: b.ID, BatchReference: b.BatchReference, TenantID: b.TenantID, ItemCount: b.ItemCount, TotalSantim: b.TotalSantim}
	if out.ID == "" {
		return Batch{}, &PartnerError{Op: op, Kind: KindUnknown, Message: "answer without a batch id"}
	}
	out.Items = make([]BatchItemResult, len(b.Items))
	for i, it := range b.Items {
		st, err := parseTransferStatus(op, it.Status)
		if err != nil {
			return Batch{}, err
		}
		out.Items[i] = BatchItemResult{Reference: it.Reference, TransferID: it.TransferID, Status: st, FailureCode: it.FailureCode}
	}
	return out, nil
}

// TransferByReference implements Adapter.
func (a *SandboxAdapter) TransferByReference(ctx context.Context, reference string) (Transfer, error) {
	const op = "sandbox.transfer_by_reference"
	seg, perr := pathSegment(op, reference)
	if perr != nil {
		return Transfer{}, perr
	}
	var out sbTransfer
	status, perr := a.do(ctx, op, http.MethodGet, "/api/v1/transfers/by-reference/"+seg, nil, &out, 1<<20)
	if perr != nil {
		return Transfer{}, perr
	}
	if status != http.StatusOK {
		return Transfer{}, &PartnerError{Op: op, Kind: KindUnknown, Status: status, Message: "unexpected status"}
	}
	return out.toTransfer(op)
}

// Statement implements Adapter.
func (a *SandboxAdapter) Statement(ctx context.Context, req StatementRequest) ([]byte, error) {
	const op = "sandbox.statement"
	q := url.Values{}
	q.Set("account", req.Account)
	q.Set("from", req.From.UTC().Format(time.DateOnly))
	q.Set("to", req.To.UTC().Format(time.DateOnly))
	q.Set("format", string(req.Format))
	var raw []byte
	status, perr := a.do(ctx, op, http.MethodGet, "/api/v1/statements?"+q.Encode(), nil, &raw, 256<<20)
	if perr != nil {
		return nil, perr
	}
	if status != http.StatusOK {
		return nil, &PartnerError{Op: op, Kind: KindUnknown, Status: status, Message: "unexpected status"}
	}
	return raw, nil
}

// Probe implements Adapter: any well-formed answer to an account lookup (found or not) shows the
// bank is up; it reads nothing sensitive and changes nothing.
func (a *SandboxAdapter) Probe(ctx context.Context) error {
	_, err := a.LookupAccount(ctx, "health-probe")
	if err != nil && !IsKind(err, KindNotFound) {
		return err
	}
	return nil
}

func (t sbTransfer) toTransfer(op string) (Transfer, error) {
	st, err := parseTransferStatus(op, t.Status)
	if err != nil {
		return Transfer{}, err
	}
	if t.ID == "" || t.Reference == "" {
		return Transfer{}, &PartnerError{Op: op, Kind: KindUnknown, Message: "transfer without id or reference"}
	}
	out := Transfer{
		ID: t.ID, Reference: t.Reference, FromAccount: t.FromAccount, ToAccount: t.ToAccount,
		AmountSantim: t.AmountSantim, Currency: t.Currency, TenantID: t.TenantID, Domain: t.Domain,
		Status: st, FailureCode: t.FailureCode, BatchID: t.BatchID, CreatedAt: t.CreatedAt,
	}
	if t.SettledAt != nil {
		out.SettledAt = *t.SettledAt
	}
	return out, nil
}

func parseTransferStatus(op, s string) (TransferStatus, error) {
	switch TransferStatus(s) {
	case TransferPending, TransferSettled, TransferFailed:
		return TransferStatus(s), nil
	}
	return "", &PartnerError{Op: op, Kind: KindUnknown, Message: fmt.Sprintf("unknown transfer status %q", s)}
}

// do performs one HTTP exchange. A 2xx body is decoded into out (or copied, when out is
// *[]byte); any other status becomes a PartnerError classified by what it means for money.
func (a *SandboxAdapter) do(ctx context.Context, op, method, path string, in, out any, limit int64) (int, *PartnerError) {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return 0, &PartnerError{Op: op, Kind: KindInvalid, Message: "encode request", Err: err}
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, a.base.String()+path, body)
	if err != nil {
		return 0, &PartnerError{Op: op, Kind: KindInvalid, Message: "build request", Err: err}
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	resp, err := a.client.Do(req)
	if err != nil {
		return 0, transportError(op, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		// The status line arrived, so the bank received the request; a broken body leaves the
		// outcome unknown.
		pe := transportError(op, err)
		if pe.Kind == KindUnavailable {
			pe.Kind = KindUnknown
		}
		pe.Status = resp.StatusCode
		return resp.StatusCode, pe
	}
	if int64(len(data)) > limit {
		return resp.StatusCode, &PartnerError{Op: op, Kind: KindUnknown, Status: resp.StatusCode, Message: fmt.Sprintf("answer larger than %d bytes", limit)}
	}
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		if raw, ok := out.(*[]byte); ok {
			*raw = data
			return resp.StatusCode, nil
		}
		if err := json.Unmarshal(data, out); err != nil {
			return resp.StatusCode, &PartnerError{Op: op, Kind: KindUnknown, Status: resp.StatusCode, Message: "unreadable answer", Err: err}
		}
		return resp.StatusCode, nil
	}
	var e sbError
	_ = json.Unmarshal(data, &e)
	pe := &PartnerError{Op: op, Status: resp.StatusCode, Code: e.Error.Code, Message: e.Error.Message, Kind: answerKind(resp.StatusCode, e.Error.Code)}
	if pe.Message == "" {
		pe.Message = http.StatusText(resp.StatusCode)
	}
	return resp.StatusCode, pe
}

// pathSegment escapes an id for one segment of a request path. "." and ".." are not ids there
// but directions (the bank's router would resolve them to another route), so they are refused
// here, as the caller's error, and the bank is not asked.
func pathSegment(op, v string) (string, *PartnerError) {
	if v == "." || v == ".." {
		return "", &PartnerError{Op: op, Kind: KindInvalid, Message: "a path segment such as '.' or '..' is not an id"}
	}
	return url.PathEscape(v), nil
}

// answerKind classifies a non-2xx answer. A 4xx is the bank refusing this request, so it did
// not act and is working as it should: whatever the caller sent, it must never count against the
// bank's health. Only 408 and 429 are the bank saying it cannot take the request now. A 5xx, or a
// status the contract does not describe, leaves the outcome unknown.
func answerKind(status int, code string) Kind {
	switch {
	case status == http.StatusNotFound && (code == "ACCOUNT_NOT_FOUND" || code == "TRANSFER_NOT_FOUND" || code == "BATCH_NOT_FOUND" ||
		code == "IDENTITY_NOT_FOUND"):
		return KindNotFound
	case status == http.StatusConflict:
		return KindConflict
	case status == http.StatusUnprocessableEntity:
		return KindRejected
	case status == http.StatusRequestTimeout || status == http.StatusTooManyRequests:
		return KindUnavailable
	case status >= 400 && status < 500:
		// 400, a 404 without our codes (no such route: a path the request made up), 405, 413,
		// 414, 431, …
		return KindInvalid
	}
	return KindUnknown
}

// transportError classifies an error from the HTTP client. Only a failed dial is certain not to
// have delivered the request; everything else (reset, timeout mid-exchange) leaves it unknown.
func transportError(op string, err error) *PartnerError {
	pe := &PartnerError{Op: op, Kind: KindUnknown, Err: err}
	var opErr *net.OpError
	switch {
	case errors.As(err, &opErr) && opErr.Op == "dial":
		pe.Kind = KindUnavailable
		pe.Message = "connect"
	case errors.Is(err, context.DeadlineExceeded):
		pe.Timeout = true
		pe.Message = "timeout"
	case errors.Is(err, context.Canceled):
		pe.Message = "canceled"
	default:
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			pe.Timeout = true
			pe.Message = "timeout"
		}
	}
	return pe
}
