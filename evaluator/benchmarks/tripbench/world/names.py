"""The vocabulary of the generated world: cities (real-ish centre coordinates), categories,
brands, cuisines and name fragments. Constants only; `generate.py` draws from them."""

from __future__ import annotations

# (name, latitude, longitude, tier): tier 1 = largest cities (more POIs, higher prices).
# The first six are the `small` world: a connected cluster plus two far cities.
CITIES: tuple[tuple[str, float, float, int], ...] = (
    ("Shanghai", 31.2304, 121.4737, 1),
    ("Hangzhou", 30.2741, 120.1551, 2),
    ("Nanjing", 32.0603, 118.7969, 2),
    ("Suzhou", 31.2990, 120.5853, 2),
    ("Beijing", 39.9042, 116.4074, 1),
    ("Chengdu", 30.5728, 104.0668, 1),
    ("Guangzhou", 23.1291, 113.2644, 1),
    ("Shenzhen", 22.5431, 114.0579, 1),
    ("Wuhan", 30.5928, 114.3055, 2),
    ("Xi'an", 34.3416, 108.9398, 2),
    ("Chongqing", 29.5630, 106.5516, 1),
    ("Tianjin", 39.0842, 117.2010, 2),
    ("Changsha", 28.2282, 112.9388, 2),
    ("Zhengzhou", 34.7466, 113.6254, 2),
    ("Qingdao", 36.0671, 120.3826, 2),
    ("Xiamen", 24.4798, 118.0894, 2),
    ("Kunming", 25.0389, 102.7183, 2),
    ("Dalian", 38.9140, 121.6147, 2),
    ("Shenyang", 41.8057, 123.4315, 2),
    ("Harbin", 45.8038, 126.5350, 2),
    ("Jinan", 36.6512, 117.1201, 3),
    ("Fuzhou", 26.0745, 119.2965, 3),
    ("Hefei", 31.8206, 117.2272, 3),
    ("Nanchang", 28.6829, 115.8582, 3),
    ("Guiyang", 26.6470, 106.6302, 3),
    ("Nanning", 22.8170, 108.3665, 3),
    ("Haikou", 20.0440, 110.1999, 3),
    ("Sanya", 18.2528, 109.5119, 3),
    ("Lanzhou", 36.0611, 103.8343, 3),
    ("Urumqi", 43.8256, 87.6168, 3),
    ("Lhasa", 29.6520, 91.1721, 3),
    ("Hohhot", 40.8424, 111.7490, 3),
    ("Taiyuan", 37.8706, 112.5489, 3),
    ("Shijiazhuang", 38.0428, 114.5149, 3),
    ("Ningbo", 29.8683, 121.5440, 3),
    ("Wuxi", 31.4912, 120.3119, 3),
    ("Guilin", 25.2736, 110.2900, 3),
    ("Lijiang", 26.8550, 100.2270, 3),
    ("Zhangjiajie", 29.1170, 110.4792, 3),
    ("Huangshan", 29.7147, 118.3375, 3),
)


# attraction category -> (name nouns, opening (open, close), closed weekdays, visit minutes,
# free probability, adult ticket price range)
ATTRACTION_CATEGORIES: dict[str, tuple[tuple[str, ...], tuple[str, str], str, tuple[int, ...],
                                       float, tuple[int, int]]] = {
    "museum": (("Museum", "History Museum", "Science Museum", "Art Museum"), ("09:00", "17:00"),
               "0", (90, 120, 150, 180), 0.5, (20, 80)),
    "park": (("Park", "People's Park", "Forest Park", "Wetland Park"), ("06:00", "22:00"), "",
             (60, 90, 120), 0.8, (10, 40)),
    "historic site": (("Ancient City Wall", "Old Residence", "Drum Tower", "Imperial Garden",
                       "Memorial Archway"), ("08:30", "17:30"), "", (60, 90, 120, 150), 0.3,
                      (30, 120)),
    "temple": (("Temple", "Buddhist Temple", "Taoist Temple", "Pagoda"), ("07:00", "17:00"), "",
               (60, 90), 0.4, (10, 50)),
    "zoo": (("Zoo", "Wildlife Park", "Panda Base"), ("08:00", "18:00"), "", (150, 180, 240),
            0.0, (40, 150)),
    "theme park": (("Happy Valley", "Fantasy Land", "Amusement Park", "Water World"),
                   ("09:30", "21:00"), "", (240, 300, 360), 0.0, (150, 399)),
    "botanical garden": (("Botanical Garden", "Flower Garden", "Bamboo Garden"),
                         ("07:30", "18:00"), "", (90, 120), 0.3, (10, 60)),
    "ancient town": (("Ancient Town", "Old Street", "Water Town"), ("08:00", "22:00"), "",
                     (120, 180, 240), 0.6, (50, 150)),
    "mountain": (("Mountain Scenic Area", "Peak", "Valley Scenic Area"), ("07:00", "17:30"), "",
                 (180, 240, 300), 0.1, (60, 230)),
    "lake & river": (("Lake", "River Scenic Belt", "Waterfront"), ("06:00", "22:00"), "",
                     (60, 120, 180), 0.6, (20, 120)),
    "aquarium": (("Ocean Park", "Aquarium", "Polar World"), ("09:00", "18:00"), "",
                 (150, 180, 240), 0.0, (120, 300)),
    "art gallery": (("Art Gallery", "Contemporary Art Center", "Exhibition Hall"),
                    ("10:00", "18:00"), "0", (60, 90), 0.5, (20, 100)),
    "shopping street": (("Pedestrian Street", "Night Market", "Commercial Street"),
                        ("10:00", "22:00"), "", (60, 90, 120), 1.0, (0, 0)),
    "nightlife & live shows": (("Live Theatre", "Night Cruise", "Light Show", "Acrobatics Hall"),
                               ("18:30", "23:30"), "", (90, 120), 0.0, (80, 380)),
    "memorial hall": (("Memorial Hall", "Revolution Memorial", "Former Residence"),
                      ("09:00", "16:30"), "0", (60, 90), 0.9, (10, 30)),
}
ATTRACTION_WORDS = (
    "Xuanwu", "Jinshan", "Qingyun", "Baiyun", "Longhua", "Tianning", "Zijin", "Yuelu", "Wanshou",
    "Jinghua", "Lingyin", "Huanglong", "Qiantang", "Fenghuang", "Shuanglin", "Taohua", "Yunqi",
    "Cuiping", "Baoguo", "Guanyin", "Minjiang", "Yinxing", "Lanting", "Mingyue", "Xiling",
    "Donghu", "Nanhu", "Beishan", "Xishan", "Jiulong", "Songhe", "Zhuquan", "Hongfu", "Dinghu",
    "Yuhua", "Tianzhu", "Chunhui", "Ruyi", "Jingshan", "Wenshu",
)
DISTRICTS = (
    "Central", "Railway Station", "Old Town", "Riverside", "High-tech Zone", "University Town",
    "Airport", "Financial District", "East Lake", "West Lake", "Century Avenue", "Culture Park",
    "People's Square", "Xinhua Road", "Jiefang Road", "Zhongshan Road", "Renmin Road",
    "Expo Center", "South Gate", "North Gate", "Olympic Center", "Sports Center",
    "Convention Center", "Ancient Street", "Metro Line 1", "Metro Line 2", "Wanda Plaza",
    "Harbour City", "Golden Mile", "Shopping Mall",
)

# brand -> star (2..5); "" = independent hotels (any star)
HOTEL_BRANDS: dict[str, int] = {
    "Hilton": 5, "Marriott": 5, "InterContinental": 5, "Shangri-La": 5, "Hyatt Regency": 5,
    "Sheraton": 5, "Crowne Plaza": 4, "Novotel": 4, "Pullman": 4, "Wyndham": 4, "Atour": 4,
    "Holiday Inn": 4, "Vienna Hotel": 3, "Orange Hotel": 3, "Ji Hotel": 3, "Ibis": 3,
    "Hanting": 2, "Home Inn": 2, "7 Days Inn": 2, "Jinjiang Inn": 2, "": 0,
}
HOTEL_TYPES = {2: "economy", 3: "midscale", 4: "upscale", 5: "luxury"}
"""Hotel tier by star level: the paper's tier words (its tool answers say Economy, Midscale,
Upscale, Luxury). The one table of the tools (`hotel_type`), the HOTEL_TYPE rubric and the
task synthesiser."""
HOTEL_TYPE_ALIASES = {"budget": "economy", "comfort": "midscale", "mid-range": "midscale",
                      "premium": "upscale", "high-end": "luxury"}
"""Other words for the tiers, accepted by the tool and the rubric alike."""


def hotel_type(word: str) -> str | None:
    """The tier a word names ("Premium" -> "upscale"), or None."""
    key = word.strip().lower()
    key = HOTEL_TYPE_ALIASES.get(key, key)
    return key if key in HOTEL_TYPES.values() else None


HOTEL_FACILITIES = (
    "wifi", "parking", "breakfast", "gym", "swimming pool", "pet-friendly", "airport shuttle",
    "laundry", "restaurant", "meeting room", "spa", "ev charging", "luggage storage",
)
INDEPENDENT_HOTEL_WORDS = ("Garden Hotel", "Grand Hotel", "Boutique Hotel", "Inn", "Guesthouse",
                           "Hotel", "Courtyard Hotel", "Serviced Apartment")
# room type -> (capacity, price multiplier over the hotel's base)
ROOM_TYPES: dict[str, tuple[int, float]] = {
    "Single Room": (1, 0.8), "Standard Queen Room": (2, 1.0), "Standard Twin Room": (2, 1.0),
    "Deluxe King Room": (2, 1.3), "Deluxe Twin Room": (2, 1.3), "Business King Room": (2, 1.45),
    "Triple Room": (3, 1.5), "Family Room": (4, 1.8), "Executive Suite": (3, 2.6),
}
STAR_BASE_PRICE = {2: 160, 3: 280, 4: 480, 5: 900}
# a room's cancellation policy, most flexible first: code -> (words, hours before check-in
# until which cancelling is free; None = never)
CANCEL_POLICIES: dict[str, tuple[str, int | None]] = {
    "free_until_checkin": ("free cancellation until check-in", 0),
    "free_24h": ("free cancellation until 24 hours before check-in", 24),
    "free_72h": ("free cancellation until 72 hours before check-in", 72),
    "non_refundable": ("non-refundable", None),
}


def cancel_rank(code: str) -> int | None:
    """0 = most flexible; None for a code that is no policy."""
    key = code.strip().lower().replace("-", "_").replace(" ", "_")
    return list(CANCEL_POLICIES).index(key) if key in CANCEL_POLICIES else None


FLIGHT_PLATFORMS = ("Ctrip", "Fliggy", "Qunar", "Airline website")
TRAIN_PLATFORMS = ("12306", "Ctrip", "Fliggy", "Qunar")
"""Where tickets are sold: each seat class of a service is offered on one to three of them."""

# cuisine -> average price per person at tier 2
CUISINES: dict[str, int] = {
    "Sichuan Cuisine": 75, "Cantonese Cuisine": 110, "Hunan Cuisine": 70, "Shandong Cuisine": 85,
    "Huaiyang Cuisine": 120, "Zhejiang Cuisine": 95, "Fujian Cuisine": 90, "Hotpot": 105,
    "Barbecue": 80, "Home-style Cooking": 55, "Noodles": 28, "Dumplings": 35, "Seafood": 160,
    "Korean Cuisine": 90, "Japanese Cuisine": 150, "Western Food": 130, "Vegetarian": 70,
    "Dim Sum": 65, "Local Snacks": 30, "Northwest Cuisine": 60, "Yunnan Cuisine": 75,
    "Cafe & Dessert": 45, "Peking Duck": 140, "Fast Food": 30,
}
RESTAURANT_WORDS = (
    "Old", "Golden", "Lucky", "Jade", "Red Lantern", "Happy", "Grandma's", "Little", "Great",
    "Silver Moon", "Bamboo", "Lotus", "Peony", "Dragon", "Phoenix", "Spring", "Harvest",
    "Family", "Hometown", "Alley", "Courtyard", "Riverside", "Mountain", "Sunny", "Star",
)
SURNAMES = ("Wang", "Li", "Zhang", "Liu", "Chen", "Yang", "Zhao", "Huang", "Zhou", "Wu", "Xu",
            "Sun", "Hu", "Zhu", "Gao", "Lin", "He", "Guo", "Ma", "Luo")
RESTAURANT_NOUNS = ("Kitchen", "House", "Restaurant", "Canteen", "Eatery", "Bistro", "Garden",
                    "Tavern", "Dining Hall", "Noodle Bar", "Food Court")

AIRLINES = (("Air China", "CA"), ("China Eastern", "MU"), ("China Southern", "CZ"),
            ("Hainan Airlines", "HU"), ("Sichuan Airlines", "3U"), ("Xiamen Airlines", "MF"),
            ("Shenzhen Airlines", "ZH"), ("Spring Airlines", "9C"), ("Juneyao Air", "HO"),
            ("Shandong Airlines", "SC"))
AIRPORT_WORDS = ("International Airport", "Airport")
# city -> its airports (names before " International Airport" / " Airport")
AIRPORTS: dict[str, tuple[str, ...]] = {
    "Shanghai": ("Pudong", "Hongqiao"), "Hangzhou": ("Xiaoshan",), "Nanjing": ("Lukou",),
    "Beijing": ("Capital", "Daxing"), "Chengdu": ("Tianfu", "Shuangliu"),
    "Guangzhou": ("Baiyun",), "Shenzhen": ("Bao'an",), "Wuhan": ("Tianhe",),
    "Xi'an": ("Xianyang",), "Chongqing": ("Jiangbei",), "Tianjin": ("Binhai",),
    "Changsha": ("Huanghua",), "Zhengzhou": ("Xinzheng",), "Qingdao": ("Jiaodong",),
    "Xiamen": ("Gaoqi",), "Kunming": ("Changshui",), "Dalian": ("Zhoushuizi",),
    "Shenyang": ("Taoxian",), "Harbin": ("Taiping",), "Jinan": ("Yaoqiang",),
    "Fuzhou": ("Changle",), "Hefei": ("Xinqiao",), "Nanchang": ("Changbei",),
    "Guiyang": ("Longdongbao",), "Nanning": ("Wuxu",), "Haikou": ("Meilan",),
    "Sanya": ("Phoenix",), "Lanzhou": ("Zhongchuan",), "Urumqi": ("Diwopu",),
    "Lhasa": ("Gonggar",), "Hohhot": ("Baita",), "Taiyuan": ("Wusu",),
    "Shijiazhuang": ("Zhengding",), "Ningbo": ("Lishe",), "Guilin": ("Liangjiang",),
    "Lijiang": ("Sanyi",), "Zhangjiajie": ("Hehua",), "Huangshan": ("Tunxi",),
}
STATION_SUFFIXES = ("Station", "South Station", "East Station", "West Station",
                    "North Station")
TRAIN_SEATS: dict[str, tuple[tuple[str, float], ...]] = {
    # train type -> (seat class, price multiplier over the second class / hard seat fare)
    "G": (("second class", 1.0), ("first class", 1.6), ("business class", 3.1)),
    "D": (("second class", 1.0), ("first class", 1.6)),
    "K": (("hard seat", 1.0), ("hard sleeper", 1.9), ("soft sleeper", 2.9)),
}
TRAIN_SPEED_KMH = {"G": 260.0, "D": 180.0, "K": 80.0}
TRAIN_FARE_PER_KM = {"G": 0.46, "D": 0.31, "K": 0.14}
