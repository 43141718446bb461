// Package kyc owns KYC submissions: who is verified (an employee of the tenant, or a user acting in
// it), their full name, national id, date of birth, photo and documents bound to content hashes,
// and the review lifecycle PENDING → IN_REVIEW → APPROVED | REJECTED, back to PENDING on a
// request for more information, and APPROVED → EXPIRED when the validity period ends.
//
// Every transition writes the state change, its audit row and its outbox event in the caller's
// transaction (Transition); a national ID registry check is recorded the same way (CheckRegistry:
// the check, its CheckNationalId audit row and its kyc.registry_checked.v1 event, which names no
// personal data). Illegal moves are ErrInvalidTransition. Gate is the check the money
// sagas call before anything moves: it passes only for an APPROVED submission whose validity has
// not ended, and fails closed on anything else, errors included.
//
// Documents and sanctions are other packages' (internal/uploads, internal/sanctions); this package
// takes what it needs from them as small interfaces the API wires in.
package kyc
