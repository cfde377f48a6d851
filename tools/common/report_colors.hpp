#pragma once
// The heat map's colour scale: speed-ups mapped on a log axis onto a perceptually ordered palette
// (dark blue = least gain, yellow = most), and the legend ticks worth labelling.

#include <string>
#include <vector>

namespace mqajit::tools {

class SpeedupScale {
public:
    // The range of the values to colour; a range narrower than 10% is widened around its middle
    // so that one value alone still gets a legend.
    SpeedupScale(double lowest, double highest);

    double lowest() const { return lowest_; }
    double highest() const { return highest_; }
    // 0 at lowest(), 1 at highest(), on a log axis; clamped outside.
    double position(double speedup) const;
    std::string color(double speedup) const;           // "#rrggbb"
    std::string color_at(double position) const;       // by position in [0, 1]
    // Whether white text reads better than black on color(speedup).
    bool dark(double speedup) const;
    // The ends of the range and the round values (1.5x, 2x, 3x, ...) between them.
    std::vector<double> ticks() const;

private:
    double lowest_, highest_;
};

}  // namespace mqajit::tools
