// Package codes turns sequence numbers into short URL codes.
package codes

const alphabet = "23456789abcdefghjkmnpqrstuvwxyz"

// Encode writes n in base 31 over an alphabet without look-alike characters.
func Encode(n uint64) string {
	if n == 0 {
		return string(alphabet[0])
	}
	base := uint64(len(alphabet))
	var buf [16]byte
	i := len(buf)
	for n > 0 {
		i--
		buf[i] = alphabet[n%base]
		n /= base
	}
	return string(buf[i:])
}
