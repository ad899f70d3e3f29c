package desired

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/pbkdf2"
	"crypto/sha256"
	"crypto/x509/pkix"
	"encoding/asn1"
	"fmt"
	"slices"
	"unicode/utf16"
)

// elasticsearch-hadoop's secure settings store (es.keystore.location), as its own `keytool`
// CLI writes it (elastic/elasticsearch-hadoop v9.3.2, unchanged through v9.4.4,
// mr/src/main/java/org/elasticsearch/hadoop/security/KeystoreWrapper.java): a Java PKCS#12
// KeyStore with the empty password (DEFAULT_PASS "", "TODO: Eventually support password
// protected keystores"), each setting a SecretKeyEntry whose alias is the setting's name and
// whose key bytes are its value (setSecureSetting: new SecretKeySpec(value.getBytes(), "AES");
// getSecureSetting: new String(getSecretKey().getEncoded())). SecureSettings.getSecureProperty
// reads a setting there before the job's configuration.
//
// The JDK writes a SecretKeyEntry as a PKCS#12 secretBag holding a PKCS#8-shrouded key, and
// reads it back (OpenJDK 25, sun/security/pkcs12/PKCS12KeyStore.java: loadSafeContents,
// SecretBag_OID; internalGetKey): the secretBag's value is an EncryptedPrivateKeyInfo whose
// plaintext is SEQUENCE { INTEGER 0, AlgorithmIdentifier { key algorithm }, OCTET STRING key }.
// encodeEsHadoopKeystore writes exactly that, nothing else:
//   - the key is encrypted with PBES2 (PBKDF2 with HMAC-SHA256, AES-256-CBC), what the JDK
//     itself writes since 8u301, 11.0.12 and 17 (the apache/spark images run 17);
//   - no MacData: the JDK treats it as optional when it loads a store ("The MacData is
//     optional"), and with the empty password it would authenticate nothing.
//
// The password being empty, neither the encryption nor the iteration count protects the
// password: the Secret's access control does, as for the basic-auth Secret the password comes
// from. So the salt and the IV are derived from the content instead of drawn at random: the
// same settings give the same bytes, and an apply rewrites nothing until the password changes.

// ESKeystorePasswordSetting is the secure setting elasticsearch-hadoop reads the HTTP basic
// auth password from (ConfigurationOptions.ES_NET_HTTP_AUTH_PASS; CommonsHttpTransport
// addHttpAuth reads it through SecureSettings).
const ESKeystorePasswordSetting = "es.net.http.auth.pass"

var (
	oidData                 = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 7, 1}
	oidSecretBag            = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 12, 10, 1, 5}
	oidPKCS8ShroudedKeyBag  = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 12, 10, 1, 2}
	oidFriendlyName         = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 9, 20}
	oidPBES2                = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 5, 13}
	oidPBKDF2               = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 5, 12}
	oidHMACWithSHA256       = asn1.ObjectIdentifier{1, 2, 840, 113549, 2, 9}
	oidAES256CBC            = asn1.ObjectIdentifier{2, 16, 840, 1, 101, 3, 4, 1, 42}
	oidAES                  = asn1.ObjectIdentifier{2, 16, 840, 1, 101, 3, 4, 1} // the JDK's "AES"
	esKeystoreKDFIterations = 10000                                              // the JDK's default for PBES2
)

type p12ContentInfo struct {
	ContentType asn1.ObjectIdentifier
	Content     asn1.RawValue `asn1:"tag:0,explicit,optional"`
}

type p12PFX struct {
	Version  int
	AuthSafe p12ContentInfo
}

type p12Attribute struct {
	ID    asn1.ObjectIdentifier
	Value asn1.RawValue `asn1:"set"`
}

// A RawValue is marshalled as it is, whatever its field's tags say: those holding [0] EXPLICIT
// or a SET carry that wrapping themselves.
type p12SafeBag struct {
	ID         asn1.ObjectIdentifier
	Value      asn1.RawValue  `asn1:"tag:0,explicit"`
	Attributes []p12Attribute `asn1:"set,optional"`
}

type p12SecretBag struct {
	TypeID asn1.ObjectIdentifier
	Value  []byte `asn1:"tag:0,explicit"`
}

type p12EncryptedKey struct {
	Algorithm pkix.AlgorithmIdentifier
	Data      []byte
}

type p12SecretKey struct {
	Version   int
	Algorithm pkix.AlgorithmIdentifier
	Key       []byte
}

type pbkdf2Params struct {
	Salt       []byte
	Iterations int
	PRF        pkix.AlgorithmIdentifier
}

type pbes2Params struct {
	KDF    pkix.AlgorithmIdentifier
	Scheme pkix.AlgorithmIdentifier
}

// encodeEsHadoopKeystore returns elasticsearch-hadoop's secure settings store holding settings
// (name → value), as elasticsearch-hadoop's keytool would write it. Deterministic: the same
// settings give the same bytes.
func encodeEsHadoopKeystore(settings map[string]string) ([]byte, error) {
	var bags []p12SafeBag
	for _, name := range slices.Sorted(mapKeys(settings)) {
		bag, err := secretKeyBag(name, settings[name])
		if err != nil {
			return nil, err
		}
		bags = append(bags, bag)
	}
	safeContents, err := asn1.Marshal(bags)
	if err != nil {
		return nil, err
	}
	authSafe, err := asn1.Marshal([]p12ContentInfo{dataContent(safeContents)})
	if err != nil {
		return nil, err
	}
	return asn1.Marshal(p12PFX{Version: 3, AuthSafe: dataContent(authSafe)})
}

// secretKeyBag is one setting: a secretBag with the value as an AES key's bytes, encrypted
// with the empty password, named by a friendlyName attribute (the JDK's alias).
func secretKeyBag(name, value string) (p12SafeBag, error) {
	if value == "" {
		return p12SafeBag{}, fmt.Errorf("es-hadoop keystore: setting %s is empty (the JDK refuses an empty key)", name)
	}
	plain, err := asn1.Marshal(p12SecretKey{Algorithm: pkix.AlgorithmIdentifier{Algorithm: oidAES}, Key: []byte(value)})
	if err != nil {
		return p12SafeBag{}, err
	}
	seed := sha256.Sum256([]byte("strata es-hadoop keystore\x00" + name + "\x00" + value))
	salt, iv := seed[:16], seed[16:]
	key, err := pbkdf2.Key(sha256.New, "", salt, esKeystoreKDFIterations, 32)
	if err != nil {
		return p12SafeBag{}, err
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return p12SafeBag{}, err
	}
	pad := aes.BlockSize - len(plain)%aes.BlockSize // PKCS#5 padding, as the JDK's cipher expects
	padded := append(plain, slices.Repeat([]byte{byte(pad)}, pad)...)
	enc := make([]byte, len(padded))
	cipher.NewCBCEncrypter(block, iv).CryptBlocks(enc, padded)

	params, err := pbes2Parameters(salt, iv)
	if err != nil {
		return p12SafeBag{}, err
	}
	epki, err := asn1.Marshal(p12EncryptedKey{Algorithm: pkix.AlgorithmIdentifier{Algorithm: oidPBES2, Parameters: params}, Data: enc})
	if err != nil {
		return p12SafeBag{}, err
	}
	secret, err := asn1.Marshal(p12SecretBag{TypeID: oidPKCS8ShroudedKeyBag, Value: epki})
	if err != nil {
		return p12SafeBag{}, err
	}
	friendly, err := asn1.Marshal(asn1.RawValue{Tag: asn1.TagBMPString, Bytes: bmpString(name)})
	if err != nil {
		return p12SafeBag{}, err
	}
	return p12SafeBag{
		ID:         oidSecretBag,
		Value:      asn1.RawValue{Class: asn1.ClassContextSpecific, Tag: 0, IsCompound: true, Bytes: secret},
		Attributes: []p12Attribute{{ID: oidFriendlyName, Value: asn1.RawValue{Class: asn1.ClassUniversal, Tag: asn1.TagSet, IsCompound: true, Bytes: friendly}}},
	}, nil
}

// pbes2Parameters are the PBES2 parameters: PBKDF2 (salt, iterations, HMAC-SHA256) and
// AES-256-CBC with iv.
func pbes2Parameters(salt, iv []byte) (asn1.RawValue, error) {
	kdf, err := asn1.Marshal(pbkdf2Params{Salt: salt, Iterations: esKeystoreKDFIterations,
		PRF: pkix.AlgorithmIdentifier{Algorithm: oidHMACWithSHA256, Parameters: asn1.NullRawValue}})
	if err != nil {
		return asn1.RawValue{}, err
	}
	ivDER, err := asn1.Marshal(iv)
	if err != nil {
		return asn1.RawValue{}, err
	}
	out, err := asn1.Marshal(pbes2Params{
		KDF:    pkix.AlgorithmIdentifier{Algorithm: oidPBKDF2, Parameters: asn1.RawValue{FullBytes: kdf}},
		Scheme: pkix.AlgorithmIdentifier{Algorithm: oidAES256CBC, Parameters: asn1.RawValue{FullBytes: ivDER}},
	})
	return asn1.RawValue{FullBytes: out}, err
}

// dataContent is a ContentInfo of type data: [0] EXPLICIT OCTET STRING.
func dataContent(b []byte) p12ContentInfo {
	octets, _ := asn1.Marshal(b) // a byte slice always marshals
	return p12ContentInfo{ContentType: oidData,
		Content: asn1.RawValue{Class: asn1.ClassContextSpecific, Tag: 0, IsCompound: true, Bytes: octets}}
}

// bmpString is s in UTF-16 big-endian, as ASN.1's BMPString carries it.
func bmpString(s string) []byte {
	var out []byte
	for _, r := range utf16.Encode([]rune(s)) {
		out = append(out, byte(r>>8), byte(r))
	}
	return out
}

func mapKeys(m map[string]string) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}
