package ledger

import (
	"context"

	ledgerv1 "github.com/wagerail/wagerail/schema/proto/ledger/v1"
)

// Server implements the LedgerService gRPC API over a Store. Errors leave as *Error values; the
// interceptor from Metrics.UnaryInterceptor turns them into gRPC statuses.
type Server struct {
	ledgerv1.UnimplementedLedgerServiceServer
	store         *Store
	postings      *coalescer
	adjustmentKey []byte
	metrics       *Metrics
}

// NewServer builds the service. adjustmentKey verifies PostAdjustment approval signatures;
// with an empty key every adjustment is refused.
func NewServer(store *Store, adjustmentKey []byte, metrics *Metrics) *Server {
	return &Server{store: store, postings: newCoalescer(store), adjustmentKey: adjustmentKey, metrics: metrics}
}

// LoadDrift sets the drift gauge from the figures the database keeps (Store.DriftTotals): after
// each reconciliation, and at start, so a restarted ledger exports the drift that stands.
func (s *Server) LoadDrift(ctx context.Context) error {
	totals, err := s.store.DriftTotals(ctx)
	if err != nil {
		return err
	}
	s.metrics.setDrift(totals)
	return nil
}

func (s *Server) EnsureAccount(ctx context.Context, r *ledgerv1.EnsureAccountRequest) (*ledgerv1.EnsureAccountResponse, error) {
	var typ AccountType
	if r.GetType() != ledgerv1.AccountType_ACCOUNT_TYPE_UNSPECIFIED {
		if typ = typeFromPB(r.GetType()); typ == "" {
			return nil, errorf(ReasonInvalidAccountType, "unknown account type %d", r.GetType())
		}
	}
	if err := validateTenant(r.GetTenantId()); err != nil {
		return nil, err
	}
	acc, created, err := s.store.EnsureAccount(ctx, r.GetTenantId(), r.GetName(), typ, r.GetCurrency())
	if err != nil {
		return nil, err
	}
	return &ledgerv1.EnsureAccountResponse{Account: AccountToPB(acc), Created: created}, nil
}

func (s *Server) GetAccount(ctx context.Context, r *ledgerv1.GetAccountRequest) (*ledgerv1.GetAccountResponse, error) {
	acc, err := s.store.GetAccount(ctx, r.GetTenantId(), AccountRef{ID: r.GetAccountId(), Name: r.GetAccountName()})
	if err != nil {
		return nil, err
	}
	return &ledgerv1.GetAccountResponse{Account: AccountToPB(acc)}, nil
}

func (s *Server) ListAccounts(ctx context.Context, r *ledgerv1.ListAccountsRequest) (*ledgerv1.ListAccountsResponse, error) {
	accs, next, err := s.store.ListAccounts(ctx, r.GetTenantId(), r.GetNamePrefix(), r.GetPageSize(), r.GetPageToken())
	if err != nil {
		return nil, err
	}
	out := &ledgerv1.ListAccountsResponse{NextPageToken: next}
	for _, a := range accs {
		out.Accounts = append(out.Accounts, AccountToPB(a))
	}
	return out, nil
}

func (s *Server) countWritten(t *Transaction) {
	s.metrics.entriesWritten(len(t.Entries))
	s.metrics.transition("", t.Status)
}

func (s *Server) PostTransaction(ctx context.Context, r *ledgerv1.PostTransactionRequest) (*ledgerv1.PostTransactionResponse, error) {
	if r.GetStatus() != ledgerv1.TransactionStatus_TRANSACTION_STATUS_UNSPECIFIED &&
		r.GetStatus() != ledgerv1.TransactionStatus_TRANSACTION_STATUS_PENDING &&
		r.GetStatus() != ledgerv1.TransactionStatus_TRANSACTION_STATUS_POSTED {
		return nil, errorf(ReasonInvalidArgument, "status must be PENDING or POSTED")
	}
	// Concurrent postings of a tenant share database transactions (see coalescer).
	t, replayed, err := s.postings.post(ctx, PostingFromPB(r))
	if err != nil {
		return nil, err
	}
	if !replayed {
		s.countWritten(t)
	}
	return &ledgerv1.PostTransactionResponse{Transaction: TransactionToPB(t), Replayed: replayed}, nil
}

func (s *Server) PostTransactions(ctx context.Context, r *ledgerv1.PostTransactionsRequest) (*ledgerv1.PostTransactionsResponse, error) {
	ps := make([]Posting, len(r.GetTransactions()))
	for i, tr := range r.GetTransactions() {
		ps[i] = PostingFromPB(tr)
		if st := tr.GetStatus(); st != ledgerv1.TransactionStatus_TRANSACTION_STATUS_UNSPECIFIED &&
			st != ledgerv1.TransactionStatus_TRANSACTION_STATUS_PENDING && st != ledgerv1.TransactionStatus_TRANSACTION_STATUS_POSTED {
			ps[i].Status = Status(st.String()) // refused by the validator, per item
		}
	}
	res, err := s.store.PostBatch(ctx, r.GetTenantId(), ps)
	if err != nil && len(ps) > 1 && len(ps) <= MaxBatch && validateTenant(r.GetTenantId()) == nil && isDataError(err) {
		// The database refused one of the postings (an account at its limit): find which by
		// writing each alone, so it fails alone, as the validator's refusals do.
		res, err = s.postEach(ctx, r.GetTenantId(), ps)
	}
	if err != nil {
		return nil, err
	}
	out := &ledgerv1.PostTransactionsResponse{Results: make([]*ledgerv1.PostTransactionResult, len(res))}
	for i, pr := range res {
		item := &ledgerv1.PostTransactionResult{IdempotencyKey: ps[i].IdempotencyKey, Replayed: pr.Replayed}
		if pr.Err != nil {
			item.ErrorCode, item.ErrorReason, item.ErrorMessage = itemError(pr.Err)
		} else {
			if !pr.Replayed {
				s.countWritten(pr.Transaction)
			}
			t := *pr.Transaction
			t.Entries = nil // keep batch answers small; GetTransaction has the entries
			item.Transaction = TransactionToPB(&t)
		}
		out.Results[i] = item
	}
	return out, nil
}

// itemError is how one item of a batch answer carries its error: the gRPC code, reason and
// message the error would have had as the status of a call of its own.
func itemError(err error) (code int32, reason, message string) {
	st := ToStatus(err)
	reason = string(ReasonInternal)
	if le, ok := err.(*Error); ok {
		reason = string(le.Reason)
	}
	return int32(st.Code()), reason, st.Message()
}

func (s *Server) postEach(ctx context.Context, tenant string, ps []Posting) ([]PostResult, error) {
	res := make([]PostResult, len(ps))
	for i, p := range ps {
		one, err := s.store.PostBatch(ctx, tenant, []Posting{p})
		switch {
		case err == nil:
			res[i] = one[0]
		case isDataError(err):
			res[i].Err = err
		default:
			return nil, err
		}
	}
	return res, nil
}

func (s *Server) CommitPending(ctx context.Context, r *ledgerv1.CommitPendingRequest) (*ledgerv1.CommitPendingResponse, error) {
	t, err := s.store.Commit(ctx, r.GetTenantId(), r.GetTransactionId())
	if err != nil {
		return nil, err
	}
	s.metrics.transition(Pending, Posted)
	s.metrics.entriesWritten(countPhase(t, PhasePosted) + countPhase(t, PhaseRelease))
	return &ledgerv1.CommitPendingResponse{Transaction: TransactionToPB(t)}, nil
}

func (s *Server) VoidPending(ctx context.Context, r *ledgerv1.VoidPendingRequest) (*ledgerv1.VoidPendingResponse, error) {
	var t *Transaction
	var err error
	switch {
	case r.GetTransactionId() != "" && r.GetIdempotencyKey() != "":
		err = errorf(ReasonInvalidArgument, "set transaction_id or idempotency_key, not both")
	case r.GetIdempotencyKey() != "":
		var keyVoided bool
		t, keyVoided, err = s.store.VoidByKey(ctx, r.GetTenantId(), r.GetIdempotencyKey(), r.GetReason())
		if keyVoided {
			return &ledgerv1.VoidPendingResponse{KeyVoided: true}, nil
		}
	default:
		t, err = s.store.Void(ctx, r.GetTenantId(), r.GetTransactionId(), r.GetReason())
	}
	if err != nil {
		return nil, err
	}
	s.metrics.transition(Pending, Voided)
	s.metrics.entriesWritten(countPhase(t, PhaseRelease))
	return &ledgerv1.VoidPendingResponse{Transaction: TransactionToPB(t)}, nil
}

func countPhase(t *Transaction, p Phase) int {
	n := 0
	for _, e := range t.Entries {
		if e.Phase == p {
			n++
		}
	}
	return n
}

func (s *Server) Reverse(ctx context.Context, r *ledgerv1.ReverseRequest) (*ledgerv1.ReverseResponse, error) {
	rev, orig, replayed, err := s.store.Reverse(ctx, r.GetTenantId(), r.GetTransactionId(), r.GetReason(), r.GetIdempotencyKey(), lineageFromPB(r.GetLineage()))
	if err != nil {
		return nil, err
	}
	if !replayed {
		s.countWritten(rev)
		s.metrics.transition(Posted, Reversed)
	}
	return &ledgerv1.ReverseResponse{Reversal: TransactionToPB(rev), Original: TransactionToPB(orig), Replayed: replayed}, nil
}

func (s *Server) PostAdjustment(ctx context.Context, r *ledgerv1.PostAdjustmentRequest) (*ledgerv1.PostAdjustmentResponse, error) {
	ar := AdjustmentRequestFromPB(r)
	p := Posting{
		TenantID: r.GetTenantId(), IdempotencyKey: r.GetIdempotencyKey(), Entries: ar.Entries, Status: Posted,
		Metadata: r.GetMetadata(), Lineage: lineageFromPB(r.GetLineage()), Kind: AdjustmentKind, Adjustment: &ar.Adjustment,
	}
	// The approval is checked before anything is read: an unsigned request learns nothing about
	// accounts or keys. Only the request's own form is checked first, so malformed input is
	// InvalidArgument at every RPC alike, signed or not.
	if err := ValidatePosting(p); err != nil {
		return nil, err
	}
	if err := VerifyAdjustment(s.adjustmentKey, ar, r.GetApprovalSignature()); err != nil {
		return nil, err
	}
	t, replayed, err := s.store.Post(ctx, p)
	if err != nil {
		return nil, err
	}
	if !replayed {
		s.countWritten(t)
	}
	return &ledgerv1.PostAdjustmentResponse{Transaction: TransactionToPB(t), Replayed: replayed}, nil
}

func (s *Server) GetBalance(ctx context.Context, r *ledgerv1.GetBalanceRequest) (*ledgerv1.GetBalanceResponse, error) {
	asOf, err := timeFromPB("as_of", r.GetAsOf())
	if err != nil {
		return nil, err
	}
	b, err := s.store.GetBalance(ctx, r.GetTenantId(), AccountRef{ID: r.GetAccountId(), Name: r.GetAccountName()}, asOf)
	if err != nil {
		return nil, err
	}
	return &ledgerv1.GetBalanceResponse{Balance: BalanceToPB(b)}, nil
}

func (s *Server) GetBalances(ctx context.Context, r *ledgerv1.GetBalancesRequest) (*ledgerv1.GetBalancesResponse, error) {
	asOf, err := timeFromPB("as_of", r.GetAsOf())
	if err != nil {
		return nil, err
	}
	refs := make([]AccountRef, len(r.GetAccounts()))
	for i, a := range r.GetAccounts() {
		refs[i] = AccountRef{ID: a.GetAccountId(), Name: a.GetAccountName()}
	}
	res, err := s.store.GetBalances(ctx, r.GetTenantId(), refs, asOf)
	if err != nil {
		return nil, err
	}
	out := &ledgerv1.GetBalancesResponse{Results: make([]*ledgerv1.BalanceResult, len(res))}
	for i, br := range res {
		item := &ledgerv1.BalanceResult{}
		if br.Err != nil {
			item.ErrorCode, item.ErrorReason, item.ErrorMessage = itemError(br.Err)
		} else {
			item.Balance = BalanceToPB(br.Balance)
		}
		out.Results[i] = item
	}
	return out, nil
}

func (s *Server) ListEntries(ctx context.Context, r *ledgerv1.ListEntriesRequest) (*ledgerv1.ListEntriesResponse, error) {
	from, err := timeFromPB("from", r.GetFrom())
	if err != nil {
		return nil, err
	}
	to, err := timeFromPB("to", r.GetTo())
	if err != nil {
		return nil, err
	}
	es, next, err := s.store.ListEntries(ctx, r.GetTenantId(), AccountRef{ID: r.GetAccountId(), Name: r.GetAccountName()},
		from, to, r.GetPageSize(), r.GetPageToken())
	if err != nil {
		return nil, err
	}
	out := &ledgerv1.ListEntriesResponse{NextPageToken: next}
	for _, e := range es {
		out.Entries = append(out.Entries, EntryToPB(e))
	}
	return out, nil
}

func (s *Server) GetTransaction(ctx context.Context, r *ledgerv1.GetTransactionRequest) (*ledgerv1.GetTransactionResponse, error) {
	t, err := s.store.GetTransaction(ctx, r.GetTenantId(), r.GetTransactionId(), r.GetIdempotencyKey())
	if err != nil {
		return nil, err
	}
	return &ledgerv1.GetTransactionResponse{Transaction: TransactionToPB(t)}, nil
}

func (s *Server) GetTransactions(ctx context.Context, r *ledgerv1.GetTransactionsRequest) (*ledgerv1.GetTransactionsResponse, error) {
	ts, err := s.store.GetTransactions(ctx, r.GetTenantId(), r.GetTransactionIds(), !r.GetOmitEntries())
	if err != nil {
		return nil, err
	}
	out := &ledgerv1.GetTransactionsResponse{Transactions: make([]*ledgerv1.Transaction, len(ts))}
	for i, t := range ts {
		out.Transactions[i] = TransactionToPB(t)
	}
	return out, nil
}

func (s *Server) ReconcileWithBank(ctx context.Context, r *ledgerv1.ReconcileWithBankRequest) (*ledgerv1.ReconcileWithBankResponse, error) {
	start, err := timeFromPB("period_start", r.GetPeriodStart())
	if err != nil {
		return nil, err
	}
	end, err := timeFromPB("period_end", r.GetPeriodEnd())
	if err != nil {
		return nil, err
	}
	req := ReconcileRequest{TenantID: r.GetTenantId(), Partner: r.GetPartner(), PeriodStart: start, PeriodEnd: end}
	for _, a := range r.GetAccounts() {
		sa := StatementAccount{Account: a.GetAccount(), HasClosingBalance: a.GetHasClosingBalance(), ClosingBalanceSantim: a.GetClosingBalanceSantim()}
		for _, l := range a.GetLines() {
			sl := StatementLine{Reference: l.GetReference(), AmountSantim: l.GetAmountSantim()}
			booked, err := timeFromPB("booked_at", l.GetBookedAt())
			if err != nil {
				return nil, err
			}
			if booked != nil {
				sl.BookedAt = *booked
			}
			sa.Lines = append(sa.Lines, sl)
		}
		req.Accounts = append(req.Accounts, sa)
	}
	rep, err := s.store.Reconcile(ctx, req)
	if err != nil {
		return nil, err
	}
	if err := s.LoadDrift(ctx); err != nil {
		return nil, err
	}
	out := &ledgerv1.ReconcileWithBankResponse{Partner: rep.Partner, TotalAbsDriftSantim: rep.TotalAbsDriftSantim, InBalance: rep.InBalance}
	conv := func(ms []LineMismatch) []*ledgerv1.LineMismatch {
		var o []*ledgerv1.LineMismatch
		for _, m := range ms {
			o = append(o, &ledgerv1.LineMismatch{Reference: m.Reference, BankAmountSantim: m.BankAmountSantim, LedgerAmountSantim: m.LedgerAmountSantim, TransactionId: m.TransactionID})
		}
		return o
	}
	for _, d := range rep.Accounts {
		out.Accounts = append(out.Accounts, &ledgerv1.AccountDrift{
			Account: d.Account, LedgerAccountName: d.LedgerAccountName, LedgerAccountExists: d.LedgerAccountExists,
			LedgerBalanceSantim: d.LedgerBalanceSantim, HasBankBalance: d.HasBankBalance, BankBalanceSantim: d.BankBalanceSantim,
			DriftSantim: d.DriftSantim, LinesMatched: int32(d.LinesMatched),
			MissingInLedger: conv(d.MissingInLedger), MissingAtBank: conv(d.MissingAtBank), AmountMismatch: conv(d.AmountMismatch),
		})
	}
	return out, nil
}

func (s *Server) VerifyCheckpoints(ctx context.Context, r *ledgerv1.VerifyCheckpointsRequest) (*ledgerv1.VerifyCheckpointsResponse, error) {
	n, bad, err := s.store.VerifyCheckpoints(ctx, r.GetTenantId())
	if err != nil {
		return nil, err
	}
	out := &ledgerv1.VerifyCheckpointsResponse{CheckpointsChecked: n}
	for _, m := range bad {
		out.Mismatches = append(out.Mismatches, &ledgerv1.CheckpointMismatch{AccountId: m.AccountID, AccountName: m.AccountName, Seq: m.Seq, Detail: m.Detail})
	}
	return out, nil
}
