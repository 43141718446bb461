package db

import "testing"

// Ordinary scopes take the one-round-trip BEGIN; only NUL or invalid UTF-8 fall back.
func TestScopedBeginTakesOrdinaryValues(t *testing.T) {
	for _, v := range []string{"", "t_1", `a'b\c`, "ሰላም"} {
		if _, ok := scopedSettings(v, v); !ok {
			t.Errorf("scopedSettings(%q) fell back", v)
		}
	}
	for _, v := range []string{"a\x00b", "\xff"} {
		if _, ok := scopedSettings("t", v); ok {
			t.Errorf("scopedSettings(%q) took a literal", v)
		}
	}
	got, _ := scopedSettings(`x'y`, `\`)
	want := `SELECT set_config('app.tenant_id', E'x\'y', true), set_config('app.user_id', E'\\', true)`
	if got != want {
		t.Errorf("scopedSettings = %s, want %s", got, want)
	}
}
