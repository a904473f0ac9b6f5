package sdk

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/subtle"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// ServerPolicy is what a server accepts in the Authorization header.
// bearer compares Token; oauth and workload verify a JWT signed with
// Algorithm (ES256 under PublicKey, or HS256 under Secret) and check its
// claims against Issuer, Audience and Purpose at Clock (Unix seconds, a JSON
// number; nil: the wall clock). none and mtls accept any header list.
type ServerPolicy struct {
	Mode      string
	Token     string
	Algorithm string
	PublicKey *ecdsa.PublicKey
	Secret    []byte
	Issuer    string
	Audience  string
	Purpose   string
	Clock     any
}

// Authorize checks every Authorization header of one request, in order: ""
// when accepted, else which check failed (never the credential itself).
func (p *ServerPolicy) Authorize(headers []string) string {
	switch p.Mode {
	case "bearer", "oauth", "workload":
	default:
		return ""
	}
	if len(headers) == 0 {
		return "no Authorization header"
	}
	if len(headers) > 1 {
		return "more than one Authorization header"
	}
	token, why := BearerToken(headers[0])
	if why != "" {
		return why
	}
	if p.Mode == "bearer" {
		if subtle.ConstantTimeCompare([]byte(token), []byte(p.Token)) != 1 {
			return "wrong token"
		}
		return ""
	}
	return p.verifyJWT(token)
}

// BearerToken reads "Bearer" 1*SP token (the scheme in any case, RFC 7235
// section 2.1 and RFC 6750), refusing anything else.
func BearerToken(header string) (string, string) {
	scheme, rest, found := strings.Cut(header, " ")
	if !found || !strings.EqualFold(scheme, "bearer") {
		return "", "not a Bearer credential"
	}
	token := strings.TrimLeft(rest, " ")
	if token == "" {
		return "", "Bearer without a token"
	}
	if strings.ContainsAny(token, " \t,") {
		return "", "more than one token"
	}
	return token, ""
}

func (p *ServerPolicy) clock() float64 {
	if p.Clock != nil {
		if f, err := strconv.ParseFloat(string(EncodeString(p.Clock)), 64); err == nil {
			return f
		}
	}
	return float64(time.Now().Unix())
}

func numericDate(v any) (float64, bool) {
	if !IsNumber(v) {
		return 0, false
	}
	f, err := strconv.ParseFloat(EncodeString(v), 64)
	return f, err == nil
}

var b64 = base64.RawURLEncoding.Strict()

// verifyJWT checks a compact JWS: the algorithm named by the header must be
// the policy's (none never); the key is always the configured one (kid, jku,
// x5u and jwk headers are ignored); header and claims are strict JSON.
func (p *ServerPolicy) verifyJWT(token string) string {
	segments := strings.Split(token, ".")
	if len(segments) != 3 {
		return "not a compact JWS"
	}
	rawHeader, err := b64.DecodeString(segments[0])
	if err != nil {
		return "JWT header is not base64url"
	}
	header, err := Decode(rawHeader)
	if err != nil {
		return "JWT header is not strict JSON"
	}
	alg, _ := Path(header, "alg").(string)
	if alg == "" || alg != p.Algorithm {
		return "JWT algorithm not allowed"
	}
	signature, err := b64.DecodeString(segments[2])
	if err != nil {
		return "JWT signature is not base64url"
	}
	signed := segments[0] + "." + segments[1]
	switch alg {
	case "ES256":
		if p.PublicKey == nil || !verified(signatureKey{alg, signed, string(signature), p.PublicKey, ""},
			func() bool { return jwt.SigningMethodES256.Verify(signed, signature, p.PublicKey) == nil }) {
			return "bad signature"
		}
	case "HS256":
		if len(p.Secret) == 0 || !verified(signatureKey{alg, signed, string(signature), nil, string(p.Secret)},
			func() bool { return jwt.SigningMethodHS256.Verify(signed, signature, p.Secret) == nil }) {
			return "bad signature"
		}
	default:
		return "JWT algorithm not allowed"
	}
	rawClaims, err := b64.DecodeString(segments[1])
	if err != nil {
		return "JWT claims are not base64url"
	}
	decoded, err := Decode(rawClaims)
	if err != nil {
		return "JWT claims are not strict JSON"
	}
	claims, ok := decoded.(map[string]any)
	if !ok {
		return "JWT claims are not an object"
	}
	return p.checkClaims(claims)
}

// signatureKey: one signature check, by algorithm, signed text, signature
// and key.
type signatureKey struct {
	alg, signed, signature string
	publicKey              *ecdsa.PublicKey
	secret                 string
}

// goodSignatures remembers the signature checks that passed: a check is a
// pure function of its key, so a client presenting the same token on every
// request costs one verification (the claims are checked every time, the
// clock moves). Failed checks are not remembered.
var goodSignatures struct {
	sync.Mutex
	seen map[signatureKey]bool
}

const maxGoodSignatures = 256

func verified(k signatureKey, verify func() bool) bool {
	goodSignatures.Lock()
	hit := goodSignatures.seen[k]
	goodSignatures.Unlock()
	if hit {
		return true
	}
	if !verify() {
		return false
	}
	goodSignatures.Lock()
	if goodSignatures.seen == nil {
		goodSignatures.seen = map[signatureKey]bool{}
	}
	if len(goodSignatures.seen) < maxGoodSignatures {
		goodSignatures.seen[k] = true
	}
	goodSignatures.Unlock()
	return true
}

func (p *ServerPolicy) checkClaims(claims map[string]any) string {
	if iss, _ := claims["iss"].(string); iss != p.Issuer {
		return "wrong iss"
	}
	switch aud := claims["aud"].(type) {
	case string:
		if aud != p.Audience {
			return "wrong aud"
		}
	case []any:
		if !contains(Strings(aud), p.Audience) {
			return "wrong aud"
		}
	default:
		return "wrong aud"
	}
	if purpose, _ := claims["purpose"].(string); purpose != p.Purpose {
		return "wrong purpose"
	}
	if sub, _ := claims["sub"].(string); sub == "" {
		return "missing or empty sub"
	}
	now := p.clock()
	exp, ok := numericDate(claims["exp"])
	if !ok {
		return "missing or non-numeric exp"
	}
	if exp <= now {
		return "expired"
	}
	// iat is required (docs/CONTRACT.md: a missing or non-numeric exp or iat is refused);
	// nbf is checked when present
	for _, name := range []string{"iat", "nbf"} {
		v, present := claims[name]
		if !present && name == "iat" {
			return "missing iat"
		}
		if !present {
			continue
		}
		t, ok := numericDate(v)
		if !ok {
			return "non-numeric " + name
		}
		if t > now {
			return name + " in the future"
		}
	}
	return ""
}

// ParseP256PublicKey reads a PEM public key that must be on P-256.
func ParseP256PublicKey(data []byte) (*ecdsa.PublicKey, error) {
	block, _ := pem.Decode(data)
	if block == nil {
		return nil, errors.New("not a PEM public key")
	}
	key, err := x509.ParsePKIXPublicKey(block.Bytes)
	if err != nil {
		return nil, errors.New("not a readable public key")
	}
	ec, ok := key.(*ecdsa.PublicKey)
	if !ok || ec.Curve != elliptic.P256() {
		return nil, errors.New("must hold a P-256 public key")
	}
	return ec, nil
}
