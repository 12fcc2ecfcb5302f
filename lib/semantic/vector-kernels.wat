;; Kernels of the in-memory vector index (lib/semantic/vector-index.ts) and of
;; the pair search (neighbors.ts, dotsF32), in WebAssembly SIMD: JavaScript has
;; no 128-bit lanes, and these loops are most of both searches' time. Inputs
;; are byte offsets into the exported memory, laid out by the caller; nothing
;; here allocates.
(module
  (memory (export "memory") 1 65536)

  ;; Hamming distance of each of n codes (words u32 each, at codes) to the
  ;; query's (at qc): dist[s] (u16) and a histogram hist[d]++ (i32).
  (func (export "hamming") (param $codes i32) (param $words i32) (param $n i32) (param $qc i32) (param $dist i32) (param $hist i32)
    (local $s i32) (local $p i32) (local $w i32) (local $vecEnd i32) (local $end i32) (local $d i32) (local $acc v128) (local $h i32)
    (local.set $vecEnd (i32.shl (i32.shr_u (local.get $words) (i32.const 2)) (i32.const 4)))
    (local.set $end (i32.shl (local.get $words) (i32.const 2)))
    (block $done
      (loop $slot
        (br_if $done (i32.ge_u (local.get $s) (local.get $n)))
        (local.set $p (i32.add (local.get $codes) (i32.mul (local.get $s) (local.get $end))))
        (local.set $acc (v128.const i64x2 0 0))
        (local.set $w (i32.const 0))
        (block $vdone
          (loop $vec
            (br_if $vdone (i32.ge_u (local.get $w) (local.get $vecEnd)))
            (local.set $acc (i16x8.add (local.get $acc)
              (i16x8.extadd_pairwise_i8x16_u (i8x16.popcnt (v128.xor
                (v128.load (i32.add (local.get $p) (local.get $w)))
                (v128.load (i32.add (local.get $qc) (local.get $w))))))))
            (local.set $w (i32.add (local.get $w) (i32.const 16)))
            (br $vec)))
        (local.set $acc (i32x4.extadd_pairwise_i16x8_u (local.get $acc)))
        (local.set $d (i32.add
          (i32.add (i32x4.extract_lane 0 (local.get $acc)) (i32x4.extract_lane 1 (local.get $acc)))
          (i32.add (i32x4.extract_lane 2 (local.get $acc)) (i32x4.extract_lane 3 (local.get $acc)))))
        (block $sdone
          (loop $scalar
            (br_if $sdone (i32.ge_u (local.get $w) (local.get $end)))
            (local.set $d (i32.add (local.get $d) (i32.popcnt (i32.xor
              (i32.load (i32.add (local.get $p) (local.get $w)))
              (i32.load (i32.add (local.get $qc) (local.get $w)))))))
            (local.set $w (i32.add (local.get $w) (i32.const 4)))
            (br $scalar)))
        (i32.store16 (i32.add (local.get $dist) (i32.shl (local.get $s) (i32.const 1))) (local.get $d))
        (local.set $h (i32.add (local.get $hist) (i32.shl (local.get $d) (i32.const 2))))
        (i32.store (local.get $h) (i32.add (i32.load (local.get $h)) (i32.const 1)))
        (local.set $s (i32.add (local.get $s) (i32.const 1)))
        (br $slot))))

  ;; The slots (i32, at out) whose distance is at most cutoff; returns how many.
  (func (export "within") (param $dist i32) (param $n i32) (param $cutoff i32) (param $out i32) (result i32)
    (local $s i32) (local $k i32)
    (block $done
      (loop $slot
        (br_if $done (i32.ge_u (local.get $s) (local.get $n)))
        (if (i32.le_u (i32.load16_u (i32.add (local.get $dist) (i32.shl (local.get $s) (i32.const 1)))) (local.get $cutoff))
          (then
            (i32.store (i32.add (local.get $out) (i32.shl (local.get $k) (i32.const 2))) (local.get $s))
            (local.set $k (i32.add (local.get $k) (i32.const 1)))))
        (local.set $s (i32.add (local.get $s) (i32.const 1)))
        (br $slot)))
    (local.get $k))

  ;; Integer dot product of dim int8 values at a and b.
  (func $dot (param $a i32) (param $b i32) (param $dim i32) (result i32)
    (local $i i32) (local $vecEnd i32) (local $acc v128) (local $x v128) (local $y v128) (local $sum i32)
    (local.set $vecEnd (i32.and (local.get $dim) (i32.const -16)))
    (block $vdone
      (loop $vec
        (br_if $vdone (i32.ge_u (local.get $i) (local.get $vecEnd)))
        (local.set $x (v128.load (i32.add (local.get $a) (local.get $i))))
        (local.set $y (v128.load (i32.add (local.get $b) (local.get $i))))
        (local.set $acc (i32x4.add (local.get $acc) (i32x4.add
          (i32x4.extadd_pairwise_i16x8_s (i16x8.extmul_low_i8x16_s (local.get $x) (local.get $y)))
          (i32x4.extadd_pairwise_i16x8_s (i16x8.extmul_high_i8x16_s (local.get $x) (local.get $y))))))
        (local.set $i (i32.add (local.get $i) (i32.const 16)))
        (br $vec)))
    (local.set $sum (i32.add
      (i32.add (i32x4.extract_lane 0 (local.get $acc)) (i32x4.extract_lane 1 (local.get $acc)))
      (i32.add (i32x4.extract_lane 2 (local.get $acc)) (i32x4.extract_lane 3 (local.get $acc)))))
    (block $sdone
      (loop $scalar
        (br_if $sdone (i32.ge_u (local.get $i) (local.get $dim)))
        (local.set $sum (i32.add (local.get $sum) (i32.mul
          (i32.load8_s (i32.add (local.get $a) (local.get $i)))
          (i32.load8_s (i32.add (local.get $b) (local.get $i))))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $scalar)))
    (local.get $sum))

  ;; out[j] (i32) = dot of the query (at qq) with the vector in slot slots[j]
  ;; (vectors of dim bytes from vecs); with slots = -1, slot j itself.
  (func (export "dots") (param $vecs i32) (param $dim i32) (param $qq i32) (param $slots i32) (param $count i32) (param $out i32)
    (local $j i32) (local $s i32)
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $j) (local.get $count)))
        (local.set $s (if (result i32) (i32.eq (local.get $slots) (i32.const -1))
          (then (local.get $j))
          (else (i32.load (i32.add (local.get $slots) (i32.shl (local.get $j) (i32.const 2)))))))
        (i32.store (i32.add (local.get $out) (i32.shl (local.get $j) (i32.const 2)))
          (call $dot (i32.add (local.get $vecs) (i32.mul (local.get $s) (local.get $dim))) (local.get $qq) (local.get $dim)))
        (local.set $j (i32.add (local.get $j) (i32.const 1)))
        (br $next))))

  ;; Float dot product of dim f32 values at a and b (two running sums of four lanes).
  (func $dotf (param $a i32) (param $b i32) (param $dim i32) (result f32)
    (local $i i32) (local $vecEnd i32) (local $pairEnd i32) (local $acc0 v128) (local $acc1 v128) (local $sum f32)
    (local.set $vecEnd (i32.shl (i32.and (local.get $dim) (i32.const -4)) (i32.const 2)))
    (local.set $pairEnd (i32.shl (i32.and (local.get $dim) (i32.const -8)) (i32.const 2)))
    (block $pdone
      (loop $pair
        (br_if $pdone (i32.ge_u (local.get $i) (local.get $pairEnd)))
        (local.set $acc0 (f32x4.add (local.get $acc0) (f32x4.mul
          (v128.load (i32.add (local.get $a) (local.get $i)))
          (v128.load (i32.add (local.get $b) (local.get $i))))))
        (local.set $acc1 (f32x4.add (local.get $acc1) (f32x4.mul
          (v128.load offset=16 (i32.add (local.get $a) (local.get $i)))
          (v128.load offset=16 (i32.add (local.get $b) (local.get $i))))))
        (local.set $i (i32.add (local.get $i) (i32.const 32)))
        (br $pair)))
    (if (i32.lt_u (local.get $i) (local.get $vecEnd))
      (then
        (local.set $acc0 (f32x4.add (local.get $acc0) (f32x4.mul
          (v128.load (i32.add (local.get $a) (local.get $i)))
          (v128.load (i32.add (local.get $b) (local.get $i))))))
        (local.set $i (i32.add (local.get $i) (i32.const 16)))))
    (local.set $acc0 (f32x4.add (local.get $acc0) (local.get $acc1)))
    (local.set $sum (f32.add
      (f32.add (f32x4.extract_lane 0 (local.get $acc0)) (f32x4.extract_lane 1 (local.get $acc0)))
      (f32.add (f32x4.extract_lane 2 (local.get $acc0)) (f32x4.extract_lane 3 (local.get $acc0)))))
    (local.set $dim (i32.shl (local.get $dim) (i32.const 2)))
    (block $sdone
      (loop $scalar
        (br_if $sdone (i32.ge_u (local.get $i) (local.get $dim)))
        (local.set $sum (f32.add (local.get $sum) (f32.mul
          (f32.load (i32.add (local.get $a) (local.get $i)))
          (f32.load (i32.add (local.get $b) (local.get $i))))))
        (local.set $i (i32.add (local.get $i) (i32.const 4)))
        (br $scalar)))
    (local.get $sum))

  ;; out[j] (f32) = dot of the f32 vector at q with the vector in slot slots[j]
  ;; (vectors of dim f32 from vecs): one point against the others of a bucket.
  (func (export "dotsF32") (param $vecs i32) (param $dim i32) (param $q i32) (param $slots i32) (param $count i32) (param $out i32)
    (local $j i32) (local $stride i32)
    (local.set $stride (i32.shl (local.get $dim) (i32.const 2)))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $j) (local.get $count)))
        (f32.store (i32.add (local.get $out) (i32.shl (local.get $j) (i32.const 2)))
          (call $dotf
            (i32.add (local.get $vecs) (i32.mul (i32.load (i32.add (local.get $slots) (i32.shl (local.get $j) (i32.const 2)))) (local.get $stride)))
            (local.get $q) (local.get $dim)))
        (local.set $j (i32.add (local.get $j) (i32.const 1)))
        (br $next))))
)
