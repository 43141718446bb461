package activities

import (
	"context"
	"time"

	"github.com/wagerail/wagerail/gateway"
	"github.com/wagerail/wagerail/internal/kyc"
	gatewayv1 "github.com/wagerail/wagerail/schema/proto/gateway/v1"
)

// NationalIDRegistry is kyc.Registry over the gateway's VerifyNationalId: the KYC lookup consumer
// (the worker) and the reviewers' lookup route (the API) both reach the registry through it.
type NationalIDRegistry struct {
	Gateway *gateway.Client
	// Registry is the registry's name as the gateway knows it.
	Registry string
}

// Name is the registry's name, recorded with each check.
func (r NationalIDRegistry) Name() string { return r.Registry }

// VerifyNationalID asks the gateway; any error means the registry gave no verdict.
func (r NationalIDRegistry) VerifyNationalID(ctx context.Context, nationalID, fullName string, dob time.Time) (kyc.RegistryAnswer, error) {
	res, err := r.Gateway.VerifyNationalID(ctx, &gatewayv1.VerifyNationalIdRequest{Registry: r.Registry, NationalId: nationalID,
		FullName: fullName, DateOfBirth: dob.Format(time.DateOnly)})
	if err != nil {
		return kyc.RegistryAnswer{}, err
	}
	a := kyc.RegistryAnswer{Found: res.GetFound(), NameMatches: res.GetNameMatch() == gatewayv1.NameMatch_NAME_MATCH_MATCH,
		DateOfBirthMatches: res.GetDateOfBirthMatches()}
	switch res.GetStatus() {
	case gatewayv1.IdentityStatus_IDENTITY_STATUS_ACTIVE:
		a.IDStatus = "ACTIVE"
	case gatewayv1.IdentityStatus_IDENTITY_STATUS_REVOKED:
		a.IDStatus = "REVOKED"
	case gatewayv1.IdentityStatus_IDENTITY_STATUS_DECEASED:
		a.IDStatus = "DECEASED"
	}
	// A status this build does not know stays "": never read as active (kyc.RegistryInactive).
	return a, nil
}
