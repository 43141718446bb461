package gateway

import (
	"context"
	"errors"
	"fmt"
	"time"

	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/wagerail/wagerail/internal/platform/money"
	gatewayv1 "github.com/wagerail/wagerail/schema/proto/gateway/v1"
)

// Server is the gRPC edge: validate, call the Gateway, map the answer. Nothing reaches a
// partner before validation passes. Handlers return domain errors (*Error for a refused field,
// the Gateway's errors otherwise); Metrics.UnaryInterceptor turns them into gRPC statuses in one
// place (ToStatus).
type Server struct {
	gatewayv1.UnimplementedGatewayServiceServer
	g *Gateway
}

// NewServer returns the gRPC service over g.
func NewServer(g *Gateway) *Server { return &Server{g: g} }

// LookupAccount implements gatewayv1.GatewayServiceServer.
func (s *Server) LookupAccount(ctx context.Context, req *gatewayv1.LookupAccountRequest) (*gatewayv1.LookupAccountResponse, error) {
	if err := firstInvalid(
		checkPartner(req.GetPartner()),
		checkAccount("account_id", req.GetAccountId()),
		checkHolderName("expected_holder_name", req.GetExpectedHolderName()),
	); err != nil {
		return nil, err
	}
	res, err := s.g.LookupAccount(ctx, req.GetPartner(), req.GetAccountId(), req.GetExpectedHolderName())
	if err != nil {
		return nil, err
	}
	out := &gatewayv1.LookupAccountResponse{
		Exists:        res.Exists,
		PartnerHealth: healthPB(res.Health),
		NameMatch:     gatewayv1.NameMatch_NAME_MATCH_NOT_CHECKED,
	}
	if res.Exists {
		out.ResolvedHolderName = res.Account.HolderName
		out.Currency = res.Account.Currency
		out.AccountStatus = gatewayv1.AccountStatus_ACCOUNT_STATUS_ACTIVE
		if res.Account.Closed {
			out.AccountStatus = gatewayv1.AccountStatus_ACCOUNT_STATUS_CLOSED
		}
		out.NameMatch = nameMatchPB(res.NameMatch)
	}
	return out, nil
}

// VerifyNationalId implements gatewayv1.GatewayServiceServer. Every field is checked before the
// registry is asked, so no caller can make the gateway send the registry something it refuses,
// nor count a caller's mistake against the registry's breaker.
func (s *Server) VerifyNationalId(ctx context.Context, req *gatewayv1.VerifyNationalIdRequest) (*gatewayv1.VerifyNationalIdResponse, error) {
	dob, dobErr := checkBirthDate("date_of_birth", req.GetDateOfBirth(), time.Now())
	if err := firstInvalid(
		checkRegistry(req.GetRegistry()),
		checkNationalID("national_id", req.GetNationalId()),
		checkPersonName("full_name", req.GetFullName()),
		dobErr,
	); err != nil {
		return nil, err
	}
	res, err := s.g.VerifyNationalID(ctx, req.GetRegistry(), req.GetNationalId(), req.GetFullName(), dob)
	if err != nil {
		return nil, err
	}
	out := &gatewayv1.VerifyNationalIdResponse{
		Found:              res.Found,
		Status:             identityStatusPB(res.Status),
		NameMatch:          nameMatchPB(res.NameMatch),
		DateOfBirthMatches: res.DateOfBirthMatches,
		RegistryHealth:     healthPB(res.Health),
	}
	return out, nil
}

func identityStatusPB(s IdentityStatus) gatewayv1.IdentityStatus {
	switch s {
	case IdentityActive:
		return gatewayv1.IdentityStatus_IDENTITY_STATUS_ACTIVE
	case IdentityRevoked:
		return gatewayv1.IdentityStatus_IDENTITY_STATUS_REVOKED
	case IdentityDeceased:
		return gatewayv1.IdentityStatus_IDENTITY_STATUS_DECEASED
	}
	return gatewayv1.IdentityStatus_IDENTITY_STATUS_UNSPECIFIED
}

func nameMatchPB(m NameMatch) gatewayv1.NameMatch {
	switch m {
	case NameMatches:
		return gatewayv1.NameMatch_NAME_MATCH_MATCH
	case NameMismatch:
		return gatewayv1.NameMatch_NAME_MATCH_MISMATCH
	}
	return gatewayv1.NameMatch_NAME_MATCH_NOT_CHECKED
}

func healthPB(h Health) gatewayv1.AdapterHealth {
	if h == Degraded {
		return gatewayv1.AdapterHealth_ADAPTER_HEALTH_DEGRADED
	}
	return gatewayv1.AdapterHealth_ADAPTER_HEALTH_HEALTHY
}

func transferStatusPB(s TransferStatus) gatewayv1.TransferStatus {
	switch s {
	case TransferPending:
		return gatewayv1.TransferStatus_TRANSFER_STATUS_PENDING
	case TransferSettled:
		return gatewayv1.TransferStatus_TRANSFER_STATUS_SETTLED
	case TransferFailed:
		return gatewayv1.TransferStatus_TRANSFER_STATUS_FAILED
	}
	return gatewayv1.TransferStatus_TRANSFER_STATUS_UNSPECIFIED
}

func transferPB(t Transfer) *gatewayv1.Transfer {
	out := &gatewayv1.Transfer{
		Id: t.ID, Reference: t.Reference, FromAccount: t.FromAccount, ToAccount: t.ToAccount,
		AmountSantim: t.AmountSantim, Currency: t.Currency, TenantId: t.TenantID, Domain: t.Domain,
		Status: transferStatusPB(t.Status), FailureCode: t.FailureCode, BatchId: t.BatchID,
	}
	if !t.CreatedAt.IsZero() {
		out.CreatedAt = timestamppb.New(t.CreatedAt)
	}
	if !t.SettledAt.IsZero() {
		out.SettledAt = timestamppb.New(t.SettledAt)
	}
	return out
}

// InitiateDisbursement implements gatewayv1.GatewayServiceServer.
func (s *Server) InitiateDisbursement(ctx context.Context, req *gatewayv1.InitiateDisbursementRequest) (*gatewayv1.InitiateDisbursementResponse, error) {
	ccy, ccyErr := currencyOrDefault("currency", req.GetCurrency())
	if err := firstInvalid(
		checkPartner(req.GetPartner()),
		checkReference("reference", req.GetReference()),
		checkAccount("from_account", req.GetFromAccount()),
		checkAccount("to_account", req.GetToAccount()),
		checkAmount("amount_santim", req.GetAmountSantim()),
		ccyErr,
		checkTenant("tenant_id", req.GetTenantId()),
		checkDomain("domain", req.GetDomain()),
		checkCallbackURL("callback_url", req.GetCallbackUrl()),
	); err != nil {
		return nil, err
	}
	if req.GetFromAccount() == req.GetToAccount() {
		return nil, invalidInput(refuse("to_account", "must differ from from_account"))
	}
	t, replayed, err := s.g.InitiateTransfer(ctx, req.GetPartner(), TransferRequest{
		Reference: req.GetReference(), FromAccount: req.GetFromAccount(), ToAccount: req.GetToAccount(),
		AmountSantim: req.GetAmountSantim(), Currency: ccy, TenantID: req.GetTenantId(),
		Domain: req.GetDomain(), CallbackURL: req.GetCallbackUrl(),
	})
	if err == nil {
		return &gatewayv1.InitiateDisbursementResponse{Outcome: gatewayv1.DisbursementOutcome_DISBURSEMENT_OUTCOME_ACCEPTED, Transfer: transferPB(t), Replayed: replayed}, nil
	}
	outcome, code, msg, err := writeOutcome(err)
	if err != nil {
		return nil, err
	}
	out := &gatewayv1.InitiateDisbursementResponse{Outcome: outcome}
	if outcome == gatewayv1.DisbursementOutcome_DISBURSEMENT_OUTCOME_REJECTED {
		out.RejectCode, out.RejectMessage = code, msg
	} else {
		out.UnknownReason = msg
	}
	return out, nil
}

// writeOutcome turns the failure of a money-moving call into its outcome. Only an answer in
// which the bank refused (422) is REJECTED; a failure that certainly moved nothing (the request
// never left, the bank refused the request itself or its reference, the register refused it, the
// caller left) stays an error, classified by ToStatus; everything else may have moved money and
// is UNKNOWN.
func writeOutcome(err error) (gatewayv1.DisbursementOutcome, string, string, error) {
	var pe *PartnerError
	if errors.Is(err, context.Canceled) || !errors.As(err, &pe) {
		return 0, "", "", err
	}
	switch pe.Kind {
	case KindRejected:
		return gatewayv1.DisbursementOutcome_DISBURSEMENT_OUTCOME_REJECTED, pe.Code, pe.Message, nil
	case KindConflict, KindInvalid, KindUnavailable:
		return 0, "", "", err
	}
	reason := "partner error: " + pe.Error()
	if pe.Timeout {
		reason = "timeout: " + pe.Error()
	}
	return gatewayv1.DisbursementOutcome_DISBURSEMENT_OUTCOME_UNKNOWN, "", reason, nil
}

// MaxBulkItems bounds one bulk disbursement (the partner contract's batch size).
const MaxBulkItems = 20_000

// bulkItems validates a batch's items. The total is bounded like one transaction's debits
// (money.MaxTransactionSantim): the whole batch leaves one source account, and a total past that
// bound is a mistake however it is split.
func bulkItems(from string, in []*gatewayv1.BulkItem) ([]BatchItem, error) {
	n := len(in)
	if n == 0 || n > MaxBulkItems {
		return nil, refuse("items", fmt.Sprintf("must hold 1 to %d transfers", MaxBulkItems))
	}
	items := make([]BatchItem, n)
	seen := make(map[string]int, n)
	var total int64
	for i, it := range in {
		ref, to, amount := it.GetReference(), it.GetToAccount(), it.GetAmountSantim()
		name := func(f string) string { return fmt.Sprintf("items[%d].%s", i, f) }
		if err := checkReference(name("reference"), ref); err != nil {
			return nil, err
		}
		if j, dup := seen[ref]; dup {
			return nil, refuse(name("reference"), fmt.Sprintf("repeats items[%d].reference", j))
		}
		seen[ref] = i
		if err := checkAccount(name("to_account"), to); err != nil {
			return nil, err
		}
		if to == from {
			return nil, refuse(name("to_account"), "must differ from from_account")
		}
		if err := checkAmount(name("amount_santim"), amount); err != nil {
			return nil, err
		}
		var ok bool
		if total, ok = money.Add(total, amount); !ok || total > money.MaxTransactionSantim {
			return nil, refuse("items", fmt.Sprintf("must total at most %d santim", money.MaxTransactionSantim))
		}
		items[i] = BatchItem{Reference: ref, ToAccount: to, AmountSantim: amount}
	}
	return items, nil
}

// InitiateBulkDisbursement implements gatewayv1.GatewayServiceServer.
func (s *Server) InitiateBulkDisbursement(ctx context.Context, req *gatewayv1.InitiateBulkDisbursementRequest) (*gatewayv1.InitiateBulkDisbursementResponse, error) {
	ccy, ccyErr := currencyOrDefault("currency", req.GetCurrency())
	if err := firstInvalid(
		checkPartner(req.GetPartner()),
		checkReference("batch_reference", req.GetBatchReference()),
		checkAccount("from_account", req.GetFromAccount()),
		ccyErr,
		checkTenant("tenant_id", req.GetTenantId()),
		checkDomain("domain", req.GetDomain()),
		checkCallbackURL("callback_url", req.GetCallbackUrl()),
	); err != nil {
		return nil, err
	}
	items, err := bulkItems(req.GetFromAccount(), req.GetItems())
	if err != nil {
		return nil, invalidInput(err)
	}
	b, replayed, err := s.g.InitiateBatch(ctx, req.GetPartner(), BatchRequest{
		BatchReference: req.GetBatchReference(), FromAccount: req.GetFromAccount(), Currency: ccy,
		TenantID: req.GetTenantId(), Domain: req.GetDomain(), CallbackURL: req.GetCallbackUrl(), Items: items,
	})
	if err != nil {
		outcome, code, msg, err := writeOutcome(err)
		if err != nil {
			return nil, err
		}
		out := &gatewayv1.InitiateBulkDisbursementResponse{Outcome: outcome}
		if outcome == gatewayv1.DisbursementOutcome_DISBURSEMENT_OUTCOME_REJECTED {
			out.RejectCode, out.RejectMessage = code, msg
		} else {
			out.UnknownReason = msg
		}
		return out, nil
	}
	out := &gatewayv1.InitiateBulkDisbursementResponse{
		Outcome: gatewayv1.DisbursementOutcome_DISBURSEMENT_OUTCOME_ACCEPTED, BatchId: b.ID,
		ItemCount: b.ItemCount, TotalSantim: b.TotalSantim, Replayed: replayed, Items: bulkItemResultsPB(b.Items),
	}
	return out, nil
}

// GetTransferStatus implements gatewayv1.GatewayServiceServer.
func (s *Server) GetTransferStatus(ctx context.Context, req *gatewayv1.GetTransferStatusRequest) (*gatewayv1.GetTransferStatusResponse, error) {
	if err := firstInvalid(checkPartner(req.GetPartner()), checkReference("reference", req.GetReference())); err != nil {
		return nil, err
	}
	t, err := s.g.TransferStatus(ctx, req.GetPartner(), req.GetReference())
	if err != nil {
		return nil, err
	}
	return &gatewayv1.GetTransferStatusResponse{Transfer: transferPB(t)}, nil
}

// GetBatchStatus implements gatewayv1.GatewayServiceServer.
func (s *Server) GetBatchStatus(ctx context.Context, req *gatewayv1.GetBatchStatusRequest) (*gatewayv1.GetBatchStatusResponse, error) {
	if err := firstInvalid(checkPartner(req.GetPartner()), checkReference("batch_reference", req.GetBatchReference())); err != nil {
		return nil, err
	}
	b, err := s.g.BatchStatus(ctx, req.GetPartner(), req.GetBatchReference())
	if err != nil {
		return nil, err
	}
	return &gatewayv1.GetBatchStatusResponse{BatchId: b.ID, BatchReference: b.BatchReference, ItemCount: b.ItemCount,
		TotalSantim: b.TotalSantim, Items: bulkItemResultsPB(b.Items)}, nil
}

func bulkItemResultsPB(items []BatchItemResult) []*gatewayv1.BulkItemResult {
	out := make([]*gatewayv1.BulkItemResult, len(items))
	for i, it := range items {
		out[i] = &gatewayv1.BulkItemResult{Reference: it.Reference, TransferId: it.TransferID, Status: transferStatusPB(it.Status), FailureCode: it.FailureCode}
	}
	return out
}

// GetAdapterStatus implements gatewayv1.GatewayServiceServer: a partner bank's adapter, or with
// registry set a national ID registry's, each by its own guard's health rule. Bank and registry
// names are separate ("sandbox" is both), so the field that is set says which is meant; a request
// without registry is a bank's, answered as it was before registries could be asked about.
func (s *Server) GetAdapterStatus(ctx context.Context, req *gatewayv1.GetAdapterStatusRequest) (*gatewayv1.GetAdapterStatusResponse, error) {
	if req.GetRegistry() != "" {
		if err := firstInvalid(checkRegistry(req.GetRegistry())); err != nil {
			return nil, err
		}
		if req.GetPartner() != "" {
			return nil, invalidInput(refuse("registry", "must be empty when partner is set: ask about one adapter at a time"))
		}
		r, err := s.g.Registry(req.GetRegistry())
		if err != nil {
			return nil, err
		}
		out := adapterStatusPB(r.Status())
		out.Registry = r.Name()
		return out, nil
	}
	if err := firstInvalid(checkPartner(req.GetPartner())); err != nil {
		return nil, err
	}
	p, err := s.g.Partner(req.GetPartner())
	if err != nil {
		return nil, err
	}
	out := adapterStatusPB(p.Status())
	out.Partner = p.Partner()
	return out, nil
}

// adapterStatusPB is a guard's status without its name, which the caller puts in the field of
// its kind (partner or registry).
func adapterStatusPB(st Status) *gatewayv1.GetAdapterStatusResponse {
	return &gatewayv1.GetAdapterStatusResponse{
		Health: healthPB(st.Health), Reason: st.Reason,
		WindowCalls: st.Stats.Calls, WindowErrors: st.Stats.Errors, ErrorRateBasisPoints: st.Stats.ErrorBasisPoints,
		P95Latency: durationpb.New(st.Stats.P95), Window: durationpb.New(st.Window), BreakerState: st.BreakerState,
	}
}

// FetchStatement implements gatewayv1.GatewayServiceServer.
func (s *Server) FetchStatement(ctx context.Context, req *gatewayv1.FetchStatementRequest) (*gatewayv1.FetchStatementResponse, error) {
	from, fromErr := checkDate("from_date", req.GetFromDate())
	to, toErr := checkDate("to_date", req.GetToDate())
	if err := firstInvalid(
		checkPartner(req.GetPartner()),
		checkTenant("tenant_id", req.GetTenantId()),
		checkAccount("account", req.GetAccount()),
		fromErr,
		toErr,
	); err != nil {
		return nil, err
	}
	if to.Before(from) {
		return nil, invalidInput(refuse("to_date", "must not be before from_date"))
	}
	if to.Sub(from) > MaxStatementPeriod {
		return nil, invalidInput(refuse("to_date", fmt.Sprintf("must be at most %d days after from_date", int(MaxStatementPeriod/(24*time.Hour)))))
	}
	format := FormatCSV
	switch req.GetFormat() {
	case gatewayv1.StatementFormat_STATEMENT_FORMAT_UNSPECIFIED, gatewayv1.StatementFormat_STATEMENT_FORMAT_CSV:
	case gatewayv1.StatementFormat_STATEMENT_FORMAT_CAMT053:
		format = FormatCamt053
	default:
		return nil, invalidInput(refuse("format", "must be CSV or CAMT053"))
	}
	res, err := s.g.FetchStatement(ctx, FetchRequest{Partner: req.GetPartner(), TenantID: req.GetTenantId(), Account: req.GetAccount(), From: from, To: to, Format: format})
	if err != nil {
		return nil, err
	}
	out := &gatewayv1.FetchStatementResponse{
		Partner: req.GetPartner(), Account: req.GetAccount(), Format: req.GetFormat(),
		Ingested: int64(res.New), AlreadyPresent: int64(res.AlreadyPresent), Sha256: res.SHA256,
		LineCount: int64(len(res.Lines)),
	}
	if out.Format == gatewayv1.StatementFormat_STATEMENT_FORMAT_UNSPECIFIED {
		out.Format = gatewayv1.StatementFormat_STATEMENT_FORMAT_CSV
	}
	if req.GetIncludeRaw() {
		out.Raw = res.Raw
	}
	if !req.GetOmitLines() {
		out.Lines = make([]*gatewayv1.StatementLine, len(res.Lines))
		for i, l := range res.Lines {
			out.Lines[i] = statementLinePB(l)
		}
	}
	return out, nil
}

func statementLinePB(l StatementLine) *gatewayv1.StatementLine {
	d := gatewayv1.Direction_DIRECTION_CREDIT
	if l.Direction == Debit {
		d = gatewayv1.Direction_DIRECTION_DEBIT
	}
	return &gatewayv1.StatementLine{
		EntryRef: l.EntryRef, BookingDate: l.BookingDate.Format(time.DateOnly), ValueDate: l.ValueDate.Format(time.DateOnly),
		Reference: l.Reference, Direction: d, AmountSantim: l.AmountSantim, Currency: l.Currency,
		Counterparty: l.Counterparty, BalanceAfterSantim: l.BalanceAfterSantim,
	}
}
