package record

import (
	"errors"
	"fmt"
	"os"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// BPF ring buffer layout, as the kernel maps it to user space
// (kernel/bpf/ringbuf.c, include/uapi/linux/bpf.h):
//
//   - page 0, read-write: the consumer position (unsigned long);
//   - page 1, read-only: the producer position;
//   - then the data area, mapped twice in a row so that a record that
//     wraps around the end reads as one piece.
//
// Each record starts with an 8-byte header: a u32 length whose top bits
// are BPF_RINGBUF_BUSY_BIT (reserved, not yet submitted) and
// BPF_RINGBUF_DISCARD_BIT, then the page offset. Records are padded to 8
// bytes. Positions only grow; the offset in the data is position & (size-1).
const (
	ringBusyBit    = 1 << 31
	ringDiscardBit = 1 << 30
	ringHeaderSize = 8
)

// mappedRing is one BPF ring buffer mapped into this process.
type mappedRing struct {
	consPage []byte   // page 0
	prodArea []byte   // page 1 and the doubled data area
	cons     *uintptr // unsigned long in the kernel
	prod     *uintptr
	data     []byte
	mask     uintptr
}

// mapRing maps the ring buffer map fd of size bytes (a power of two).
func mapRing(fd, size int) (*mappedRing, error) {
	if size <= 0 || size&(size-1) != 0 {
		return nil, fmt.Errorf("ring buffer size %d is not a power of two", size)
	}
	page := os.Getpagesize()
	cons, err := unix.Mmap(fd, 0, page, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("mapping the consumer page: %w", err)
	}
	prod, err := unix.Mmap(fd, int64(page), page+2*size, unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		unix.Munmap(cons)
		return nil, fmt.Errorf("mapping the producer page and data: %w", err)
	}
	return &mappedRing{
		consPage: cons,
		prodArea: prod,
		cons:     (*uintptr)(unsafe.Pointer(&cons[0])),
		prod:     (*uintptr)(unsafe.Pointer(&prod[0])),
		data:     prod[page:],
		mask:     uintptr(size - 1),
	}, nil
}

// consume hands fn every submitted record up to the producer position seen
// on entry (fn must not keep the slice), then publishes the new consumer
// position. It stops at a record still being written, or once budget has
// passed; done says it reached the producer position.
func (r *mappedRing) consume(budget time.Time, fn func([]byte)) (done bool, err error) {
	cons := atomic.LoadUintptr(r.cons)
	prod := atomic.LoadUintptr(r.prod) // acquire: the records before it are visible
	defer func() { atomic.StoreUintptr(r.cons, cons) }()
	for n := 1; cons < prod; n++ {
		off := cons & r.mask
		hdr := atomic.LoadUint32((*uint32)(unsafe.Pointer(&r.data[off])))
		if hdr&ringBusyBit != 0 {
			return false, nil // reserved, not yet submitted: next time
		}
		size := uintptr(hdr &^ (ringBusyBit | ringDiscardBit))
		next := cons + (ringHeaderSize+size+7)&^7
		if next > prod || size > uintptr(len(r.data)/2) {
			return false, fmt.Errorf("ring buffer record at %d: length %d runs past the producer position %d", cons, size, prod)
		}
		if hdr&ringDiscardBit == 0 {
			start := off + ringHeaderSize
			fn(r.data[start : start+size])
		}
		cons = next
		if n%checkEvery == 0 && time.Now().After(budget) {
			return cons == prod, nil
		}
	}
	return true, nil
}

// unmap releases the mappings.
func (r *mappedRing) unmap() error {
	return errors.Join(unix.Munmap(r.prodArea), unix.Munmap(r.consPage))
}
