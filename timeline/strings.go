package timeline

import "sync"

// Strings interns command names and marker texts. ID 0 is the empty string.
// Lookups of a known string do not allocate. It is safe for concurrent use.
type Strings struct {
	mu   sync.RWMutex
	ids  map[string]CommID
	strs []string
}

// NewStrings returns an interner holding only the empty string.
func NewStrings() *Strings {
	return &Strings{ids: map[string]CommID{"": 0}, strs: []string{""}}
}

// ID returns the id of b, interning it if new.
func (s *Strings) ID(b []byte) CommID {
	s.mu.RLock()
	id, ok := s.ids[string(b)] // no allocation: the compiler special-cases this
	s.mu.RUnlock()
	if ok {
		return id
	}
	return s.IDString(string(b))
}

// IDString returns the id of str, interning it if new.
func (s *Strings) IDString(str string) CommID {
	s.mu.Lock()
	defer s.mu.Unlock()
	if id, ok := s.ids[str]; ok {
		return id
	}
	id := CommID(len(s.strs))
	s.strs = append(s.strs, str)
	s.ids[str] = id
	return id
}

// Get returns the string of id; unknown ids give "".
func (s *Strings) Get(id CommID) string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if int(id) < len(s.strs) {
		return s.strs[id]
	}
	return ""
}

// Len returns the number of interned strings.
func (s *Strings) Len() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return len(s.strs)
}
