package api

import (
	"context"
	"errors"
	"net/http"

	"github.com/gin-gonic/gin"
	"github.com/jackc/pgx/v5"

	"github.com/wagerail/wagerail/internal/identity"
	"github.com/wagerail/wagerail/internal/notify"
	"github.com/wagerail/wagerail/internal/platform/audit"
	"github.com/wagerail/wagerail/internal/platform/field"
	"github.com/wagerail/wagerail/internal/platform/logging"
)

// Phone numbers: the signed-in user proves one with a six-digit code we text to it.

type phoneRequest struct {
	PhoneNumber string `json:"phoneNumber"`
}

type phoneVerifyRequest struct {
	PhoneNumber string `json:"phoneNumber"`
	Code        string `json:"code"`
}

// sendPhoneOTP texts a fresh code to the number (earlier unused codes for it stop working).
func (s *Server) sendPhoneOTP(c *gin.Context) {
	var req phoneRequest
	if e := bindJSON(c, &req); e != nil {
		writeError(c, e)
		return
	}
	if err := field.Phone("phoneNumber", req.PhoneNumber); err != nil {
		writeError(c, fieldError(err))
		return
	}
	if !s.allow(c, ruleMessageIP, c.ClientIP()) || !s.allow(c, ruleMessageAccount, req.PhoneNumber) {
		return
	}
	cl := callerOf(c)
	ctx := c.Request.Context()
	var code string
	err := s.asUser(ctx, cl.User.ID, func(actx context.Context, tx pgx.Tx) error {
		var err error
		if code, err = identity.IssueOTP(actx, tx, cl.User.ID, req.PhoneNumber, s.now()); err != nil {
			return err
		}
		return audit.Write(actx, tx, audit.Entry{Action: "PhoneOtpSent", Outcome: audit.Success, TargetType: "User", TargetID: cl.User.ID,
			Details: map[string]string{"phoneNumber": logging.MaskLast4(req.PhoneNumber)}})
	})
	if err != nil {
		writeError(c, err)
		return
	}
	// Sent after the code is committed; a refused text is logged, and the user asks again.
	if err := s.deps.Texter.SendSMS(ctx, notify.SMS{To: req.PhoneNumber, Purpose: notify.PhoneOTP, Secret: code,
		Text: "Your Wagerail verification code is " + code + ". It expires in 5 minutes. Never share it."}); err != nil {
		s.deps.Log.Error("text not sent", "purpose", string(notify.PhoneOTP), "error", err)
	}
	c.JSON(http.StatusOK, successBody)
}

// verifyPhone checks the texted code. A wrong one counts an attempt (the code dies after
// identity.MaxOTPAttempts) in a transaction that commits, with its DENIED audit row; a right one
// records the number as the user's, verified.
func (s *Server) verifyPhone(c *gin.Context) {
	var req phoneVerifyRequest
	if e := bindJSON(c, &req); e != nil {
		writeError(c, e)
		return
	}
	if err := field.Phone("phoneNumber", req.PhoneNumber); err != nil {
		writeError(c, fieldError(err))
		return
	}
	if !sixDigits(req.Code) {
		writeError(c, fieldError(&field.Error{Field: "code", Problem: "must be the six digits we texted"}))
		return
	}
	if !s.allow(c, ruleOTPVerify, req.PhoneNumber) {
		return
	}
	cl := callerOf(c)
	ctx := c.Request.Context()
	now := s.now()
	verified := false
	err := s.asUser(ctx, cl.User.ID, func(actx context.Context, tx pgx.Tx) error {
		details := map[string]string{"phoneNumber": logging.MaskLast4(req.PhoneNumber)}
		err := identity.ConsumeOTP(actx, tx, cl.User.ID, req.PhoneNumber, req.Code, now)
		if errors.Is(err, identity.ErrInvalidSecret) {
			// Committed, not rolled back: the attempt must count.
			return audit.Write(actx, tx, audit.Entry{Action: "PhoneVerified", Outcome: audit.Denied, TargetType: "User", TargetID: cl.User.ID, Details: details})
		}
		if err != nil {
			return err
		}
		if err := identity.SetVerifiedPhone(actx, tx, cl.User.ID, req.PhoneNumber, now); err != nil {
			return err
		}
		verified = true
		return audit.Write(actx, tx, audit.Entry{Action: "PhoneVerified", Outcome: audit.Success, TargetType: "User", TargetID: cl.User.ID, Details: details})
	})
	if err != nil {
		writeError(c, err)
		return
	}
	if !verified {
		writeError(c, errInvalidCode)
		return
	}
	s.resetLimit(ctx, ruleOTPVerify, req.PhoneNumber)
	c.JSON(http.StatusOK, successBody)
}

func sixDigits(v string) bool {
	if len(v) != 6 {
		return false
	}
	for i := 0; i < len(v); i++ {
		if v[i] < '0' || v[i] > '9' {
			return false
		}
	}
	return true
}
