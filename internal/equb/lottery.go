package equb

import (
	"crypto/sha256"
	"encoding/hex"
	"sort"
)

// LotteryOrder is the payout order a lottery seed draws for the members (their membership ids):
// each member's ticket is sha256(seed ":" id), and tickets are paid lowest first. It depends only
// on the seed and the ids (not on their order), so anyone holding the recorded seed and the
// group's members draws the same order again.
func LotteryOrder(seed string, ids []string) []string {
	type ticket struct{ id, draw string }
	ts := make([]ticket, len(ids))
	for i, id := range ids {
		sum := sha256.Sum256([]byte(seed + ":" + id))
		ts[i] = ticket{id, hex.EncodeToString(sum[:])}
	}
	sort.Slice(ts, func(i, j int) bool {
		if ts[i].draw != ts[j].draw {
			return ts[i].draw < ts[j].draw
		}
		return ts[i].id < ts[j].id
	})
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.id
	}
	return out
}
