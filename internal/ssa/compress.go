package ssa

import (
	"bytes"
	_ "embed" // the dictionary
	"sync"

	"github.com/klauspost/compress/zstd"
)

// The texts Pack and the Applier keep are compressed with zstd and a preset dictionary. They
// were deflated (compress/flate) at first; flate cannot keep a compressor primed with a
// dictionary, so each text of a few kB cost a reset of its 640 kB of hash tables and a fill of
// its window with the 32 kB dictionary: 14 % of the operator's CPU while 1,000 pipelines were
// created. zstd prepares the dictionary once per encoder and restores only the table shards a
// text touched (github.com/klauspost/compress v1.18.6, zstd/enc_fast.go, fastEncoderDict),
// and its window takes the whole dictionary where deflate's took the last 32 kB of it.
// BenchmarkPackUnpack: 51 µs and 140 bytes a child against 128 µs and 222
// (docs/performance.md).

// dictionaryID names the dictionary in each frame. The texts never leave the process, which
// has one dictionary, so the number only has to be the same on both sides.
const dictionaryID = 1

// window is the history zstd may refer to: the dictionary (58 kB) and a child's text (1–10
// kB) fit in it.
const window = 128 << 10

// dictionary is the compressor's preset dictionary: the JSON of the children of docs/api.md's
// example as Pack and the Applier keep them (internal/desired's TestPackDictionary builds it).
// Most of a child's text is the same from one pipeline to the next (field names, the field
// manager's entry, labels, the plan's shape), and a compressor finds none of it in a text of a
// few kB alone: with it a child's packed text is a fraction of its size (docs/performance.md).
// It is part of the binary, so what one process compresses it decompresses.
//
//go:embed pack.dict
var dictionary []byte

// One encoder, whose single state EncodeAll callers take in turn (a text takes microseconds to
// compress; each state holds its tables and its copy of the dictionary's), and decoders for as
// many concurrent DecodeAll calls as zstd's default (GOMAXPROCS, at most 4): every reconcile
// reads its children unpacked.
var (
	codecOnce sync.Once
	encoder   *zstd.Encoder
	decoder   *zstd.Decoder
)

func codecs() (*zstd.Encoder, *zstd.Decoder) {
	codecOnce.Do(func() {
		var err error
		// Fails only for invalid options, which these are not: a test compresses with them.
		encoder, err = zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1),
			zstd.WithEncoderDictRaw(dictionaryID, dictionary), zstd.WithEncoderCRC(false), zstd.WithWindowSize(window))
		if err != nil {
			panic(err)
		}
		decoder, err = zstd.NewReader(nil, zstd.WithDecoderDictRaw(dictionaryID, dictionary))
		if err != nil {
			panic(err)
		}
	})
	return encoder, decoder
}

// compress is b compressed, in a slice of its own length.
func compress(b []byte) []byte {
	enc, _ := codecs()
	return bytes.Clone(enc.EncodeAll(b, make([]byte, 0, len(b)/4))) // keep what it holds only
}

// decompress is the data compress compressed.
func decompress(b []byte) ([]byte, error) {
	_, dec := codecs()
	return dec.DecodeAll(b, nil)
}
