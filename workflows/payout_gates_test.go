package workflows

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/activities"
	"github.com/wagerail/wagerail/internal/bnpl"
	"github.com/wagerail/wagerail/internal/equb"
	"github.com/wagerail/wagerail/internal/ewa"
	"github.com/wagerail/wagerail/internal/lending"
	"github.com/wagerail/wagerail/internal/savings"
	"github.com/wagerail/wagerail/internal/wallet"
)

// Every saga whose account gate looks up an account its transfer does not leave from names the
// partner the transfer goes through, so the gate refuses an account at another partner (that
// bank would credit whatever account it has under the number): the source's, escrow's or
// pool's partner, never the looked-up account's own.
func TestAccountGatesKnowTheTransferPartner(t *testing.T) {
	t.Parallel()
	const source, payee = "source-bank", "payee-bank"
	ewaSaga := &disburse{}
	ewaSaga.plan = ewa.Plan{Funding: ewa.Account{Partner: source, AccountNumber: "F1"}, Destination: ewa.Account{Partner: payee, AccountNumber: "E1"}}
	loan := &loanDisburse{}
	loan.plan = lending.DisbursePlan{Funding: lending.Account{Partner: source, AccountNumber: "F1"},
		Destination: lending.Payee{Account: lending.Account{Partner: payee, AccountNumber: "E1"}}}
	bnplSaga := &bnplActivate{}
	bnplSaga.plan = bnpl.ActivatePlan{Funding: bnpl.Account{Partner: source, AccountNumber: "F1"}, Settlement: bnpl.Account{Partner: payee, AccountNumber: "M1"}}
	equbSaga := &equbMoney{}
	equbSaga.plan = equb.MoneyPlan{Escrow: equb.Account{Partner: source, AccountNumber: "X1"}, Member: equb.Account{Partner: payee, AccountNumber: "E1"}}
	withdraw := &savingsMove{}
	withdraw.plan = savings.Plan{Kind: savings.Withdrawal, Escrow: savings.BankAccount{Partner: source, AccountNumber: "X1"},
		Payout: savings.BankAccount{Partner: payee, AccountNumber: "E1"}}
	deposit := &savingsMove{}
	deposit.plan = withdraw.plan
	deposit.plan.Kind = savings.Deposit
	walletSaga := &walletTransfer{}
	walletSaga.plan = wallet.Plan{Pool: wallet.BankAccount{Partner: source, AccountNumber: "P1"}, Destination: wallet.BankAccount{Partner: payee, AccountNumber: "E1"}}

	for name, gate := range map[string]activities.GateInput{
		"ewa": ewaSaga.gateInput(), "loan": loan.gateInput(), "bnpl": bnplSaga.gateInput(), "equb": equbSaga.gateInput(),
		"savings withdrawal": withdraw.gateInput(), "savings deposit": deposit.gateInput(), "wallet": walletSaga.gateInput(),
	} {
		require.Equal(t, payee, gate.Partner, name)
		require.Equal(t, source, gate.TransferPartner, name)
	}
}
