package desired

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/pbkdf2"
	"crypto/sha256"
	"encoding/asn1"
	"testing"
	"unicode/utf16"
)

// decodeEsHadoopKeystore reads back what encodeEsHadoopKeystore writes (setting → value),
// failing on anything else.
func decodeEsHadoopKeystore(t *testing.T, der []byte) map[string]string {
	t.Helper()
	unmarshal := func(b []byte, v any) {
		t.Helper()
		if rest, err := asn1.Unmarshal(b, v); err != nil || len(rest) > 0 {
			t.Fatalf("decoding %T: %v (%d bytes left)", v, err, len(rest))
		}
	}
	var pfx p12PFX
	unmarshal(der, &pfx)
	var authSafe, safeContents []byte
	unmarshal(pfx.AuthSafe.Content.Bytes, &authSafe)
	var infos []p12ContentInfo
	unmarshal(authSafe, &infos)
	if pfx.Version != 3 || len(infos) != 1 || !infos[0].ContentType.Equal(oidData) {
		t.Fatalf("PFX version %d, %d content infos", pfx.Version, len(infos))
	}
	unmarshal(infos[0].Content.Bytes, &safeContents)
	var bags []p12SafeBag
	unmarshal(safeContents, &bags)
	out := map[string]string{}
	for _, bag := range bags {
		var secret p12SecretBag
		unmarshal(bag.Value.Bytes, &secret) // inside [0] EXPLICIT
		var epki p12EncryptedKey
		unmarshal(secret.Value, &epki)
		var params pbes2Params
		unmarshal(epki.Algorithm.Parameters.FullBytes, &params)
		var kdf pbkdf2Params
		unmarshal(params.KDF.Parameters.FullBytes, &kdf)
		var iv []byte
		unmarshal(params.Scheme.Parameters.FullBytes, &iv)
		if !bag.ID.Equal(oidSecretBag) || !secret.TypeID.Equal(oidPKCS8ShroudedKeyBag) || !epki.Algorithm.Algorithm.Equal(oidPBES2) ||
			!kdf.PRF.Algorithm.Equal(oidHMACWithSHA256) || !params.Scheme.Algorithm.Equal(oidAES256CBC) {
			t.Fatalf("unexpected algorithms in bag %v", bag.ID)
		}
		key, err := pbkdf2.Key(sha256.New, "", kdf.Salt, kdf.Iterations, 32)
		if err != nil {
			t.Fatal(err)
		}
		block, _ := aes.NewCipher(key)
		plain := make([]byte, len(epki.Data))
		cipher.NewCBCDecrypter(block, iv).CryptBlocks(plain, epki.Data)
		plain = plain[:len(plain)-int(plain[len(plain)-1])]
		var sk p12SecretKey
		unmarshal(plain, &sk)
		if !sk.Algorithm.Algorithm.Equal(oidAES) || len(bag.Attributes) != 1 || !bag.Attributes[0].ID.Equal(oidFriendlyName) {
			t.Fatalf("secret key %v, attributes %v", sk.Algorithm.Algorithm, bag.Attributes)
		}
		var name asn1.RawValue
		unmarshal(bag.Attributes[0].Value.Bytes, &name)
		units := make([]uint16, len(name.Bytes)/2)
		for i := range units {
			units[i] = uint16(name.Bytes[2*i])<<8 | uint16(name.Bytes[2*i+1])
		}
		out[string(utf16.Decode(units))] = string(sk.Key)
	}
	return out
}

func TestEsHadoopKeystoreRoundTrip(t *testing.T) {
	settings := map[string]string{ESKeystorePasswordSetting: "pw", "es.net.ssl.truststore.pass": "changeit"}
	der, err := encodeEsHadoopKeystore(settings)
	if err != nil {
		t.Fatal(err)
	}
	got := decodeEsHadoopKeystore(t, der)
	if len(got) != 2 || got[ESKeystorePasswordSetting] != "pw" || got["es.net.ssl.truststore.pass"] != "changeit" {
		t.Errorf("decoded %v", got)
	}
	if _, err := encodeEsHadoopKeystore(map[string]string{ESKeystorePasswordSetting: ""}); err == nil {
		t.Error("an empty setting was encoded")
	}
}
