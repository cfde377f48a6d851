#include "tools/common/report_colors.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>

namespace mqajit::tools {
namespace {

struct Rgb {
    double r, g, b;
};

// NOTES: five stops of the viridis palette: ordered in lightness, so the order of speed-ups reads
// the same in grey print and for colour-blind readers.
constexpr std::array<Rgb, 5> kStops = {{{68, 1, 84}, {59, 82, 139}, {33, 145, 140}, {94, 201, 98}, {253, 231, 37}}};

Rgb rgb_at(double position) {
    const double scaled = std::clamp(position, 0.0, 1.0) * static_cast<double>(kStops.size() - 1);
    const std::size_t index = std::min(static_cast<std::size_t>(scaled), kStops.size() - 2);
    const double t = scaled - static_cast<double>(index);
    const Rgb& a = kStops[index];
    const Rgb& b = kStops[index + 1];
    return {a.r + (b.r - a.r) * t, a.g + (b.g - a.g) * t, a.b + (b.b - a.b) * t};
}

}  // namespace

SpeedupScale::SpeedupScale(double lowest, double highest) : lowest_(lowest), highest_(highest) {
    if (highest_ / lowest_ < 1.1) {
        const double middle = std::sqrt(lowest_ * highest_);
        lowest_ = middle / 1.05;
        highest_ = middle * 1.05;
    }
}

double SpeedupScale::position(double speedup) const {
    return std::clamp(std::log(speedup / lowest_) / std::log(highest_ / lowest_), 0.0, 1.0);
}

std::string SpeedupScale::color_at(double position) const {
    const Rgb c = rgb_at(position);
    return fmt::format("#{:02x}{:02x}{:02x}", static_cast<int>(std::lround(c.r)), static_cast<int>(std::lround(c.g)),
                       static_cast<int>(std::lround(c.b)));
}

std::string SpeedupScale::color(double speedup) const { return color_at(position(speedup)); }

bool SpeedupScale::dark(double speedup) const {
    const Rgb c = rgb_at(position(speedup));
    return 0.2126 * c.r + 0.7152 * c.g + 0.0722 * c.b < 128;
}

std::vector<double> SpeedupScale::ticks() const {
    std::vector<double> ticks = {lowest_};
    double last = 0.0;
    for (double round : {1.0, 1.25, 1.5, 2.0, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0, 15.0, 20.0, 30.0, 50.0}) {
        // NOTES: labels closer than 8% of the bar apart would print over each other.
        const double p = position(round);
        if (round > lowest_ && round < highest_ && p - last > 0.08 && p < 0.92) {
            ticks.push_back(round);
            last = p;
        }
    }
    ticks.push_back(highest_);
    return ticks;
}

}  // namespace mqajit::tools
