package kafka_test

import (
	"testing"

	kafkago "github.com/segmentio/kafka-go"
	"github.com/stretchr/testify/assert"

	"github.com/pcourt/pcourt/libs/kafka"
)

// javaMurmur2 are the Java client's own murmur2 vectors
// (org.apache.kafka.common.utils.UtilsTest.testMurmur2): the signed int
// Utils.murmur2 returns for each key.
var javaMurmur2 = map[string]int32{
	"21":                         -973932308,
	"foobar":                     -790332482,
	"a-little-bit-long-string":   -985981536,
	"a-little-bit-longer-string": -1486304829,
	"lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8": -58897971,
	"abc": 479470107,
}

// A keyed record goes to the partition the Java client's default
// partitioner picks, Utils.toPositive(Utils.murmur2(key)) % partitions,
// so producers in other languages agree with ours on a case's partition.
func TestPartitionerAgreesWithTheJavaClient(t *testing.T) {
	b := kafka.Partitioner()
	for _, n := range []int{1, 3, 6, 12, 100} {
		partitions := make([]int, n)
		for i := range partitions {
			partitions[i] = i
		}
		for key, hash := range javaMurmur2 {
			want := int(hash&0x7fffffff) % n // toPositive is hash & 0x7fffffff
			got := b.Balance(kafkago.Message{Key: []byte(key)}, partitions...)
			assert.Equal(t, want, got, "key %q over %d partitions", key, n)
		}
	}
	// Fixed points worked by hand from the vectors, so the test does not
	// only repeat the formula: "21" → 1173551340 % 12 = 0, "foobar" →
	// 1357151166 % 12 = 6.
	twelve := []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}
	assert.Equal(t, 0, b.Balance(kafkago.Message{Key: []byte("21")}, twelve...))
	assert.Equal(t, 6, b.Balance(kafkago.Message{Key: []byte("foobar")}, twelve...))
}
