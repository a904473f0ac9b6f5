package sdk

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"strings"
	"testing"

	"github.com/golang-jwt/jwt/v5"
)

const clock = 1_800_000_000

func claims(over map[string]any) jwt.MapClaims {
	c := jwt.MapClaims{"iss": "https://issuer.test", "aud": "ahp", "purpose": "oauth", "sub": "client-1",
		"exp": clock + 600, "iat": clock - 10}
	for k, v := range over {
		if v == nil {
			delete(c, k)
		} else {
			c[k] = v
		}
	}
	return c
}

func sign(t *testing.T, method jwt.SigningMethod, key any, c jwt.MapClaims, header map[string]any) string {
	t.Helper()
	tok := jwt.NewWithClaims(method, c)
	for k, v := range header {
		tok.Header[k] = v
	}
	s, err := tok.SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func newKey(t *testing.T) *ecdsa.PrivateKey {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func TestBearerHeaders(t *testing.T) {
	p := &ServerPolicy{Mode: "bearer", Token: "s3cret"}
	accept := [][]string{{"Bearer s3cret"}, {"bearer s3cret"}, {"BEARER   s3cret"}}
	refuse := [][]string{nil, {"Bearer wrong"}, {"Bearer s3cret", "Bearer s3cret"}, {"Bearer s3cret", "Bearer x"},
		{"Bearer s3cret s3cret"}, {"Bearer s3cret,s3cret"}, {"Token s3cret"}, {"Basic czNjcmV0"}, {"Bearer"}, {"Bearer "},
		{"Bearer " + strings.Repeat("a", 16<<10)}}
	for _, h := range accept {
		if why := p.Authorize(h); why != "" {
			t.Errorf("%q refused: %s", h, why)
		}
	}
	for _, h := range refuse {
		if p.Authorize(h) == "" {
			t.Errorf("%.40q accepted", h)
		}
	}
	if (&ServerPolicy{Mode: "none"}).Authorize([]string{"Bearer wrong", "x"}) != "" {
		t.Error("mode none must ignore credentials")
	}
}

func TestES256Policy(t *testing.T) {
	key, other := newKey(t), newKey(t)
	der, _ := x509.MarshalPKIXPublicKey(&key.PublicKey)
	pub, err := ParseP256PublicKey(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}))
	if err != nil {
		t.Fatal(err)
	}
	p := &ServerPolicy{Mode: "oauth", Algorithm: "ES256", PublicKey: pub, Issuer: "https://issuer.test",
		Audience: "ahp", Purpose: "oauth", Clock: json.Number("1800000000")}
	good := sign(t, jwt.SigningMethodES256, key, claims(nil), nil)
	if why := p.Authorize([]string{"Bearer " + good}); why != "" {
		t.Fatalf("honest token refused: %s", why)
	}
	if why := p.Authorize([]string{"Bearer " + sign(t, jwt.SigningMethodES256, key, claims(map[string]any{"aud": []any{"x", "ahp"}}), nil)}); why != "" {
		t.Errorf("aud array holding ours refused: %s", why)
	}
	der2, _ := x509.MarshalPKIXPublicKey(&other.PublicKey)
	bad := map[string]string{
		"wrong iss":         sign(t, jwt.SigningMethodES256, key, claims(map[string]any{"iss": "https://evil"}), nil),
		"wrong aud":         sign(t, jwt.SigningMethodES256, key, claims(map[string]any{"aud": "other"}), nil),
		"aud array":         sign(t, jwt.SigningMethodES256, key, claims(map[string]any{"aud": []any{"x"}}), nil),
		"wrong purpose":     sign(t, jwt.SigningMethodES256, key, claims(map[string]any{"purpose": "workload"}), nil),
		"no sub":            sign(t, jwt.SigningMethodES256, key, claims(map[string]any{"sub": nil}), nil),
		"empty sub":         sign(t, jwt.SigningMethodES256, key, claims(map[string]any{"sub": ""}), nil),
		"no exp":            sign(t, jwt.SigningMethodES256, key, claims(map[string]any{"exp": nil}), nil),
		"string exp":        sign(t, jwt.SigningMethodES256, key, claims(map[string]any{"exp": "1900000000"}), nil),
		"exp at clock":      sign(t, jwt.SigningMethodES256, key, claims(map[string]any{"exp": clock}), nil),
		"iat in future":     sign(t, jwt.SigningMethodES256, key, claims(map[string]any{"iat": clock + 5}), nil),
		"nbf in future":     sign(t, jwt.SigningMethodES256, key, claims(map[string]any{"nbf": clock + 5}), nil),
		"another key":       sign(t, jwt.SigningMethodES256, other, claims(nil), nil),
		"kid of another":    sign(t, jwt.SigningMethodES256, other, claims(nil), map[string]any{"kid": "k2", "jku": "https://evil/jwks"}),
		"HS256 confusion":   sign(t, jwt.SigningMethodHS256, der, claims(nil), nil),
		"embedded jwk":      sign(t, jwt.SigningMethodES256, other, claims(nil), map[string]any{"jwk": map[string]any{"kty": "EC", "x5c": string(der2)}}),
		"not three parts":   "a.b",
		"flipped signature": good[:len(good)-2] + flip(good[len(good)-2:]),
	}
	none := jwt.NewWithClaims(jwt.SigningMethodNone, claims(nil))
	bad["alg none"], _ = none.SignedString(jwt.UnsafeAllowNoneSignatureType)
	for name, tok := range bad {
		if p.Authorize([]string{"Bearer " + tok}) == "" {
			t.Errorf("%s accepted", name)
		}
	}
	// duplicated claims are malformed JSON, not the last one wins
	parts := strings.Split(good, ".")
	dup := b64.EncodeToString([]byte(`{"iss":"https://issuer.test","aud":"ahp","purpose":"oauth","sub":"a","sub":"b","exp":1900000000}`))
	if p.Authorize([]string{"Bearer " + parts[0] + "." + dup + "." + parts[2]}) == "" {
		t.Error("duplicate claim accepted")
	}
}

func flip(s string) string {
	if s[0] == 'A' {
		return "B" + s[1:]
	}
	return "A" + s[1:]
}

func TestHS256Policy(t *testing.T) {
	secret := []byte("compat-secret")
	p := &ServerPolicy{Mode: "workload", Algorithm: "HS256", Secret: secret, Issuer: "https://issuer.test",
		Audience: "ahp", Purpose: "workload", Clock: json.Number("1800000000")}
	c := claims(map[string]any{"purpose": "workload"})
	if why := p.Authorize([]string{"Bearer " + sign(t, jwt.SigningMethodHS256, secret, c, nil)}); why != "" {
		t.Fatalf("honest HS256 token refused: %s", why)
	}
	if p.Authorize([]string{"Bearer " + sign(t, jwt.SigningMethodHS256, []byte("other"), c, nil)}) == "" {
		t.Error("HS256 under another secret accepted")
	}
	if p.Authorize([]string{"Bearer " + sign(t, jwt.SigningMethodES256, newKey(t), c, nil)}) == "" {
		t.Error("ES256 accepted where HS256 is required")
	}
}

// A token whose signature was verified once is accepted again without a
// second verification, but only the same token under the same key, and its
// claims are still checked against the clock each time.
func TestRememberedSignatures(t *testing.T) {
	key, other := newKey(t), newKey(t)
	p := &ServerPolicy{Mode: "oauth", Algorithm: "ES256", PublicKey: &key.PublicKey, Issuer: "https://issuer.test",
		Audience: "ahp", Purpose: "oauth", Clock: json.Number("1800000000")}
	good := sign(t, jwt.SigningMethodES256, key, claims(nil), nil)
	for i := 0; i < 3; i++ {
		if why := p.Authorize([]string{"Bearer " + good}); why != "" {
			t.Fatalf("honest token refused on use %d: %s", i+1, why)
		}
	}
	if why := p.Authorize([]string{"Bearer " + good[:len(good)-2] + flip(good[len(good)-2:])}); why != "bad signature" {
		t.Errorf("flipped signature after a good one: %q", why)
	}
	q := *p
	q.PublicKey = &other.PublicKey
	if why := q.Authorize([]string{"Bearer " + good}); why != "bad signature" {
		t.Errorf("the token under another key: %q", why)
	}
	late := *p
	late.Clock = json.Number("1900000000")
	if why := late.Authorize([]string{"Bearer " + good}); why != "expired" {
		t.Errorf("a remembered token past its exp: %q", why)
	}
	secret := []byte("compat-secret")
	h := &ServerPolicy{Mode: "workload", Algorithm: "HS256", Secret: secret, Issuer: "https://issuer.test",
		Audience: "ahp", Purpose: "workload", Clock: json.Number("1800000000")}
	tok := sign(t, jwt.SigningMethodHS256, secret, claims(map[string]any{"purpose": "workload"}), nil)
	for i := 0; i < 2; i++ {
		if why := h.Authorize([]string{"Bearer " + tok}); why != "" {
			t.Fatalf("honest HS256 token refused on use %d: %s", i+1, why)
		}
	}
	h.Secret = []byte("another-secret")
	if why := h.Authorize([]string{"Bearer " + tok}); why != "bad signature" {
		t.Errorf("the HS256 token under another secret: %q", why)
	}
}
