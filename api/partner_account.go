package api

import (
	"errors"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/wagerail/wagerail/gateway"
	gatewayv1 "github.com/wagerail/wagerail/schema/proto/gateway/v1"
)

// accountCheck is an account at a partner bank that an organization's settings name (the EWA
// funding account, the payroll account), and how a refusal of it is answered.
type accountCheck struct {
	Partner, AccountNumber string
	// HolderName, when set, must match the holder name the partner resolves (compared after the
	// gateway's normalisation of case, spaces, punctuation and diacritics).
	HolderName string
	// Field is the account's field in the request ("fundingAccount"); What names it in messages
	// ("the funding account").
	Field, What string
	// The 422 codes of an unknown partner, an account the partner does not have (or not active),
	// and a holder name that differs from the partner's.
	PartnerUnknown, NotFound, HolderMismatch string
}

// checkPartnerAccount asks the partner, through the gateway's account lookup, whether the
// account exists and is active (and, when a holder name is given, is held by that name). A
// partner the gateway has no adapter for, an account the partner does not have and a holder
// name that differs are the caller's 422; a gateway or partner that cannot answer is our 503
// (nothing is stored: an unchecked account is never taken on trust).
func (s *Server) checkPartnerAccount(c *gin.Context, acct accountCheck) *Error {
	if s.deps.Gateway == nil {
		return NewError(http.StatusServiceUnavailable, "NOT_CONFIGURED", "the gateway is not configured, so "+acct.What+" cannot be checked")
	}
	refuse := func(code, f, msg string) *Error {
		e := NewError(http.StatusUnprocessableEntity, code, msg)
		e.Details = map[string]string{"field": f}
		return e
	}
	unknownPartner := func() *Error {
		return refuse(acct.PartnerUnknown, acct.Field+".partner", "the gateway knows no partner bank of this name")
	}
	noAccount := func() *Error {
		return refuse(acct.NotFound, acct.Field+".accountNumber", "the partner bank has no active account with this number")
	}
	resp, err := s.deps.Gateway.LookupAccount(c.Request.Context(),
		&gatewayv1.LookupAccountRequest{Partner: acct.Partner, AccountId: acct.AccountNumber, ExpectedHolderName: acct.HolderName})
	var ge *gateway.Error
	switch {
	case err == nil:
	case errors.As(err, &ge) && (ge.Reason == gateway.ReasonUnknownPartner || ge.Reason == gateway.ReasonInvalidArgument && ge.Field == "partner"):
		return unknownPartner()
	case errors.As(err, &ge) && (ge.Reason == gateway.ReasonPartnerInvalid || ge.Reason == gateway.ReasonInvalidArgument && ge.Field == "account_id"):
		return noAccount()
	default:
		s.deps.Log.Warn("account lookup failed", "request_id", requestID(c), "account", acct.Field, "reason", gateway.ReasonOf(err), "error", err)
		return NewError(http.StatusServiceUnavailable, "GATEWAY_UNAVAILABLE",
			"the partner bank could not be asked about "+acct.What+"; nothing was changed, retry later")
	}
	if !resp.GetExists() || resp.GetAccountStatus() != gatewayv1.AccountStatus_ACCOUNT_STATUS_ACTIVE {
		return noAccount()
	}
	if acct.HolderName != "" && resp.GetNameMatch() == gatewayv1.NameMatch_NAME_MATCH_MISMATCH {
		return refuse(acct.HolderMismatch, acct.Field+".holderName", "the partner bank's holder name of this account is not this name")
	}
	return nil
}
