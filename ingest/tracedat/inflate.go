package tracedat

import (
	"bytes"
	"fmt"
	"io"

	"github.com/klauspost/compress/zlib"
	"github.com/klauspost/compress/zstd"
)

// inflate decompresses one v7 block with the file's algorithm into dst
// (reused), checking the size the file states.
func (r *Reader) inflate(src []byte, usize int64, dst []byte) ([]byte, error) {
	if usize > maxBlob {
		return nil, fmt.Errorf("want an uncompressed size of at most %d bytes, got %d", int64(maxBlob), usize)
	}
	// A corrupt size must not allocate: reserve what the data can
	// plausibly hold and let the decoder grow it, then check.
	if want := min(usize, 16*int64(len(src))+64<<10); int64(cap(dst)) < want {
		dst = make([]byte, 0, want)
	}
	dst = dst[:0]
	switch r.compression {
	case "zstd":
		if r.zstd == nil {
			d, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(maxBlob))
			if err != nil {
				return nil, err
			}
			r.zstd = d
		}
		out, err := r.zstd.DecodeAll(src, dst)
		if err != nil {
			return nil, err
		}
		dst = out
	case "zlib":
		zr, err := zlib.NewReader(bytes.NewReader(src))
		if err != nil {
			return nil, err
		}
		buf := bytes.NewBuffer(dst)
		if _, err := io.Copy(buf, io.LimitReader(zr, usize+1)); err != nil {
			return nil, err
		}
		dst = buf.Bytes()
	default:
		return nil, fmt.Errorf("unknown compression %q", r.compression)
	}
	if int64(len(dst)) != usize {
		return nil, fmt.Errorf("want %d bytes uncompressed, got %d", usize, len(dst))
	}
	return dst, nil
}
