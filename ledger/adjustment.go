package ledger

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
)

// MinAdjustmentKeyBytes is the shortest adjustment key the ledger accepts.
const MinAdjustmentKeyBytes = 32

// AdjustmentRequest is what a platform admin approves: the adjustment, its entries, the tenant
// and the idempotency key. The API builds it after verifying the approver, signs it with
// SignAdjustment and sends the signature with PostAdjustment.
type AdjustmentRequest struct {
	TenantID       string
	IdempotencyKey string
	Adjustment     Adjustment
	Entries        []EntryInput
}

// canonicalAdjustment is the exact byte string that is signed: a version tag, then every field
// length-prefixed, entries in the order given (the signature covers exactly what is posted).
func canonicalAdjustment(r AdjustmentRequest) []byte {
	var b []byte
	str := func(s string) {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	str("wagerail-ledger-adjustment/v1")
	str(r.TenantID)
	str(r.IdempotencyKey)
	str(r.Adjustment.Source)
	str(r.Adjustment.Reason)
	str(r.Adjustment.ApprovedBy)
	str(r.Adjustment.RequestedBy)
	b = binary.AppendUvarint(b, uint64(len(r.Entries)))
	for _, e := range r.Entries {
		str(e.AccountID)
		str(e.AccountName)
		str(string(e.Direction))
		b = binary.AppendVarint(b, e.AmountSantim)
	}
	return b
}

// SignAdjustment returns the platform-admin approval signature of an adjustment:
// HMAC-SHA256 keyed with the shared adjustment key over the canonical encoding of r.
func SignAdjustment(key []byte, r AdjustmentRequest) []byte {
	m := hmac.New(sha256.New, key)
	m.Write(canonicalAdjustment(r))
	return m.Sum(nil)
}

// VerifyAdjustment checks the approval signature in constant time and that the approver is not
// the requester.
//
// Errors: ErrSignatureMissing, ErrSignatureInvalid, ErrSelfApproved.
func VerifyAdjustment(key []byte, r AdjustmentRequest, sig []byte) error {
	if len(sig) == 0 {
		return errorf(ReasonSignatureMissing, "an adjustment needs a platform-admin approval signature")
	}
	if len(key) < MinAdjustmentKeyBytes {
		// No key configured: nothing can be verified, so nothing is accepted.
		return errorf(ReasonSignatureInvalid, "adjustments are disabled: the ledger has no adjustment key")
	}
	if !hmac.Equal(SignAdjustment(key, r), sig) {
		return errorf(ReasonSignatureInvalid, "the approval signature does not match the adjustment")
	}
	if r.Adjustment.ApprovedBy == r.Adjustment.RequestedBy {
		return errorf(ReasonSelfApproved, "the approver must differ from the requester")
	}
	return nil
}
