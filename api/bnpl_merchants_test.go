package api

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/platform/db"
)

type listedMerchantPage struct {
	Items      []listedMerchantJSON `json:"items"`
	NextCursor *string              `json:"nextCursor"`
}

// TestBnplMerchantDirectory: a business sees, by id, exactly the merchants it may sell through
// now — a settlement account set and in good standing — with the name they go by (renamed: the
// new name), their bank and discount, never an account number; narrowed by a part of the name and
// paged; a merchant that is suspended, unverified or without an account is absent. Only a
// business's members read it; bad queries are 400 naming the field.
func TestBnplMerchantDirectory(t *testing.T) {
	t.Parallel()
	f := newAuthFixture(t)
	platform := f.platformAdmin("root@merchants.test")
	owner, _ := f.signUp("owner@shopper.test", "BUSINESS")
	merchant := func(email, name string, verified bool, discount int64) string {
		var id string
		if verified {
			_, res := f.signUpPartner(email, "MERCHANT")
			id = res.Organization.ID
		} else {
			_, res := f.signUp(email, "MERCHANT")
			id = res.Organization.ID
		}
		require.NoError(t, db.InTenantTx(context.Background(), f.d.App, id, func(tx pgx.Tx) error {
			if _, err := tx.Exec(context.Background(), `UPDATE app.organizations SET name = $2 WHERE id = $1`, id, name); err != nil {
				return err
			}
			if discount < 0 {
				return nil // no settlement account
			}
			_, err := tx.Exec(context.Background(), `INSERT INTO app.bnpl_merchants (tenant_id, settlement_partner, settlement_account_number,
					discount_basis_points, updated_by, updated_at) VALUES ($1, 'sandbox', $2, $3, 'test', now())`, id, "SETTLE-"+id[len(id)-6:], discount)
			return err
		}))
		return id
	}
	merkato := merchant("owner@merkato.test", "Merkato Electronics", true, 250)
	books := merchant("owner@books.test", "Bole Books ቡና", true, 0)
	merchant("owner@noaccount.test", "No Account Shop", true, -1)
	merchant("owner@unverified.test", "Unverified Shop", false, 100)
	suspended := merchant("owner@suspended.test", "Suspended Shop", true, 100)
	requireStatus(t, platform.call(http.MethodPut, "/api/merchants/"+suspended+"/status", map[string]any{"status": "SUSPENDED"}), http.StatusOK, "")

	list := func(query string) listedMerchantPage {
		t.Helper()
		rec := owner.call(http.MethodGet, "/api/bnpl/merchants"+query, nil)
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		require.NotContains(t, rec.Body.String(), "SETTLE-", "never an account number")
		return decode[listedMerchantPage](t, rec)
	}
	want := map[string]listedMerchantJSON{
		merkato: {MerchantID: merkato, Name: "Merkato Electronics", SettlementPartner: "sandbox", DiscountBasisPoints: 250},
		books:   {MerchantID: books, Name: "Bole Books ቡና", SettlementPartner: "sandbox", DiscountBasisPoints: 0},
	}
	first, second := merkato, books
	if books < merkato {
		first, second = books, merkato
	}
	all := list("")
	require.Equal(t, []listedMerchantJSON{want[first], want[second]}, all.Items)
	require.Nil(t, all.NextCursor)
	p := list("?limit=1")
	require.Equal(t, []listedMerchantJSON{want[first]}, p.Items)
	require.NotNil(t, p.NextCursor)
	p = list("?limit=1&cursor=" + *p.NextCursor)
	require.Equal(t, []listedMerchantJSON{want[second]}, p.Items)
	require.Nil(t, p.NextCursor)
	require.Equal(t, []listedMerchantJSON{want[books]}, list("?name="+url.QueryEscape(" BOOKS ")).Items)
	require.Equal(t, []listedMerchantJSON{want[books]}, list("?name="+url.QueryEscape("ቡና")).Items)
	require.Empty(t, list("?name=Suspended").Items)

	// Back in good standing, the suspended merchant is listed again.
	requireStatus(t, platform.call(http.MethodPut, "/api/merchants/"+suspended+"/status", map[string]any{"status": "ACTIVE"}), http.StatusOK, "")
	require.Len(t, list("").Items, 3)

	// A business's members only.
	fi, _ := f.signUpPartner("owner@lender-dir.test", "FI")
	shop := f.signIn("owner@merkato.test")
	for _, a := range []*apiClient{fi, shop} {
		require.Equal(t, http.StatusForbidden, a.call(http.MethodGet, "/api/bnpl/merchants", nil).Code)
	}
	require.Equal(t, http.StatusUnauthorized, f.client().call(http.MethodGet, "/api/bnpl/merchants", nil).Code)

	for q, fieldName := range map[string]string{
		"?name=":              "name",
		"?name=%20":           "name",
		"?name=a%07b":         "name",
		"?name=%E2%80%8Bbole": "name",
		"?name=" + url.QueryEscape(strings.Repeat("ቡ", 65)): "name",
		"?name=a&name=b": "name",
		"?limit=101":     "limit",
		"?cursor=a%2Fb":  "cursor",
		"?discount=0":    "discount",
	} {
		rec := owner.hostile(http.MethodGet, "/api/bnpl/merchants"+q, nil)
		require.Equal(t, http.StatusBadRequest, rec.Code, q)
		body := decodeErr(t, rec)
		require.JSONEq(t, fmt.Sprintf(`{"field":%q}`, fieldName), string(body.Error.Details), q)
	}
}
