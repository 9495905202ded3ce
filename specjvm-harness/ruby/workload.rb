# jruby workload: a Ruby program run by JRuby (Debian's jruby package). Word statistics over generated text,
# JSON round trips, regular expressions, a small particle simulation, sorting, and some file I/O through
# JRuby's native POSIX layer. Deterministic: its own LCG, no Random. Usage: workload.rb SIZE
require 'json'
require 'digest'
require 'tmpdir'

size = Integer(ARGV[0] || 200)

class Lcg
  def initialize(seed)
    @state = seed
  end

  def next_int(bound)
    @state = (@state * 6364136223846793005 + 1442695040888963407) & 0xFFFFFFFFFFFFFFFF
    (@state >> 33) % bound
  end
end

rng = Lcg.new(1998)
syllables = %w[ka lo mi nu ter ran sol vi en ad or is que pre con st al ex ion ment]
vocabulary = Array.new(1500) { Array.new(1 + rng.next_int(3)) { syllables[rng.next_int(syllables.size)] }.join }
results = []
t0 = Process.clock_gettime(Process::CLOCK_MONOTONIC, :nanosecond)

# Word statistics over generated paragraphs.
counts = Hash.new(0)
bigrams = Hash.new(0)
paragraphs = Array.new(size) do
  words = Array.new(60 + rng.next_int(60)) { vocabulary[(rng.next_int(1000)**2) / 1000 % vocabulary.size] }
  words.each_cons(2) { |a, b| bigrams["#{a} #{b}"] += 1 }
  words.each { |w| counts[w] += 1 }
  words.join(' ').capitalize + '.'
end
top = counts.sort_by { |w, c| [-c, w] }.first(10)
results << top.map { |w, c| "#{w}:#{c}" }.join(',')
results << bigrams.size

# Regular expressions (joni) over the text.
text = paragraphs.join("\n")
results << text.scan(/\b(?:pre|con)\w+/).size
results << text.gsub(/([aeiou])\1/) { |m| m.upcase }.count('A-Z')

# JSON round trips of nested records.
records = Array.new(size * 5) do |i|
  { 'id' => i, 'name' => vocabulary[i % vocabulary.size], 'tags' => Array.new(1 + i % 4) { |k| vocabulary[(i * 7 + k) % vocabulary.size] },
    'price' => (rng.next_int(100_000) / 100.0), 'stock' => { 'north' => rng.next_int(50), 'south' => rng.next_int(50) } }
end
json = JSON.generate(records)
parsed = JSON.parse(json)
results << json.size
results << parsed.sum { |r| r['stock']['north'] - r['stock']['south'] }

# A small particle simulation in floating point.
Particle = Struct.new(:x, :y, :vx, :vy, :m)
bodies = Array.new(40) { Particle.new(rng.next_int(1000) / 10.0, rng.next_int(1000) / 10.0, 0.0, 0.0, 1.0 + rng.next_int(10)) }
(size / 4 + 1).times do
  bodies.each do |a|
    fx = 0.0
    fy = 0.0
    bodies.each do |b|
      next if a.equal?(b)
      dx = b.x - a.x
      dy = b.y - a.y
      d2 = dx * dx + dy * dy + 0.01
      f = b.m / (d2 * Math.sqrt(d2))
      fx += f * dx
      fy += f * dy
    end
    a.vx += fx * 0.01
    a.vy += fy * 0.01
  end
  bodies.each { |p| p.x += p.vx * 0.01; p.y += p.vy * 0.01 }
end
results << format('%.6f', bodies.sum { |p| p.x * p.m + p.y })

# Files: write, stat, glob, read back (JRuby goes through jnr-posix for stat and friends).
Dir.mktmpdir('nativeacct-jruby') do |dir|
  (size / 2 + 1).times do |i|
    path = File.join(dir, "part-#{i}.txt")
    File.write(path, paragraphs[i % paragraphs.size] * 20)
  end
  total = Dir.glob(File.join(dir, '*.txt')).sort.sum { |path| File.size(path) + (File.file?(path) ? 1 : 0) }
  lines = Dir.glob(File.join(dir, '*.txt')).sum { |path| File.read(path).count('.') }
  results << total << lines
end

# Sorting and grouping.
sorted = records.sort_by { |r| [-r['price'], r['id']] }.first(5).map { |r| r['id'] }
results << sorted.join('/')
results << records.group_by { |r| r['tags'].size }.map { |k, v| "#{k}=#{v.size}" }.sort.join(',')

elapsed = Process.clock_gettime(Process::CLOCK_MONOTONIC, :nanosecond) - t0
warn "nativeacct-harness: workload=jruby work_ns=#{elapsed}"
puts "jruby: size #{size}, #{results.size} results, digest #{Digest::SHA256.hexdigest(results.join('|'))[0, 16]}"
