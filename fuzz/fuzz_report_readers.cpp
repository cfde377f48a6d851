// The tuner's and the report's file readers: a bench JSON (`mqajit report --bench`), the tuner's
// JSON file and output CSV, a shapes file (`bench --shapes`, `tune -i`) and a tuned table
// (`report --tuned`). The first byte picks the reader, the rest is the file. A bad file must be
// refused with mqajit::Error (which the CLI prints as a message); any other exception, or a crash,
// is a finding.

#include <cstdint>
#include <string>

#include "fuzz/fuzz_support.hpp"
#include "mqajit/error.hpp"
#include "tools/common/report_data.hpp"
#include "tools/common/shapes.hpp"
#include "tools/common/tune_json.hpp"
#include "tools/common/tune_output_csv.hpp"

using namespace mqajit;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) return 0;
    const std::string_view text = fuzz::as_text(data + 1, size - 1);
    const std::filesystem::path file = fuzz::scratch() / "input";
    fuzz::write_file(file, text);
    try {
        switch (data[0] % 5) {
            case 0: {
                for (const tools::BenchRow& row : tools::read_bench_json(file)) {
                    MQAJIT_FUZZ_EXPECT(row.baseline_us > 0 && row.flops > 0);
                }
                break;
            }
            case 1: {
                const nlohmann::json rows = tools::read_tune_json(file);
                MQAJIT_FUZZ_EXPECT(rows.is_array());
                (void)tools::merge_tune_json(rows, rows);
                break;
            }
            case 2: {
                tools::TuneOutputCsv table = tools::TuneOutputCsv::parse(text, "fuzz.csv");
                for (const TunedRow& row : table.rows()) MQAJIT_FUZZ_EXPECT(!row_problem(row));
                (void)table.text();
                break;
            }
            case 3: {
                for (const tools::BenchShape& shape : tools::read_shapes_csv(file))
                    MQAJIT_FUZZ_EXPECT(shape.seq_len >= 1 && shape.seq_len_kv >= 1);
                break;
            }
            case 4: {
                const tools::TunedTable table = tools::load_tuned_table(file, {});
                MQAJIT_FUZZ_EXPECT(!table.rows.empty());
                break;
            }
        }
    } catch (const Error&) {
    }
    return 0;
}
