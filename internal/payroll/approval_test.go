package payroll

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/platform/tenancy"
)

func TestCheckMakerCheckerRefusesTheCreator(t *testing.T) {
	ctx := tenancy.With(context.Background(), tenancy.Scope{TenantID: "org_a", Actor: "usr_maker"})
	err := CheckMakerChecker(ctx, "one-time earning", "usr_maker")
	var r *Refusal
	require.ErrorAs(t, err, &r)
	require.Equal(t, CodeSelfApproval, r.Code)
	require.Equal(t, http.StatusForbidden, r.Status)
	require.NoError(t, CheckMakerChecker(ctx, "one-time earning", "usr_other"))
}
